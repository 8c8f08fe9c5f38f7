/** The text of `loopx doctor`: one line a check, and under a problem the commands that fix it. */
import type { DoctorDoc } from '../../core/index';
import { forLogLine } from '../../core/index';

export function doctorText(d: DoctorDoc): string {
  const width = Math.max(...d.checks.map((c) => c.id.length));
  const out: string[] = [];
  for (const c of d.checks) {
    // Paths and names come from the machine and the workspace: no control character reaches the terminal.
    out.push(`${c.status.padEnd(4)}  ${c.id.padEnd(width)}  ${forLogLine(c.message, 2000)}`);
    for (const line of c.fix?.split('\n') ?? [])
      out.push(`${' '.repeat(width + 8)}fix: ${forLogLine(line, 500)}`);
  }
  const failed = d.checks.filter((c) => c.status === 'fail').length;
  const warned = d.checks.filter((c) => c.status === 'warn').length;
  out.push(
    '',
    failed
      ? `${failed} check${failed > 1 ? 's' : ''} failed${warned ? `, ${warned} to look at` : ''}`
      : warned
        ? `no check failed; ${warned} to look at`
        : 'all good',
  );
  return out.join('\n');
}
