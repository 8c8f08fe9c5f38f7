/**
 * The page's CSP allows no eval, and zod (bundled for the message rule in
 * src/core/views/dashboard-protocol.ts) probes for it with `new Function` unless told not to: the probe is
 * reported as a CSP violation even though zod catches it. Imported first by main.ts, so the
 * setting is in place before any schema exists.
 */
import { z } from 'zod';

z.config({ jitless: true });
