/**
 * The one rule for showing a time to a person, on every surface (the Goals tree, the decision
 * modal, the terminal's prompt, the dashboard): relative while it is recent (`5 min ago`,
 * `in 20 min`), the local date once it is not, and where precision matters the local date and
 * time first with the relative time after it (`Dec 5, 14:03 (5 min ago)`). Stored times stay
 * ISO; this is only how they read. Local time is the reader's: the machine's time zone, or the
 * browser's for the dashboard. No Intl (its first use costs a `loopx` call about 10 ms, see
 * people-text.ts): English month names and a 24-hour clock, as the rest of LoopX's text.
 * Nothing here imports Node: the dashboard's page loads it (views/browser.ts).
 */

const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];
const MINUTE = 60;
const HOUR = 3600;
const DAY = 86400;
/** Up to a week a relative time says enough; past it a person thinks in dates. */
const RECENT = 7 * DAY;

const pad2 = (n: number) => String(n).padStart(2, '0');

/** Seconds from `now` back to `iso` (negative when `iso` is ahead), or undefined when unreadable. */
function secondsAgo(iso: string, now: number): number | undefined {
  const t = Date.parse(iso);
  return Number.isFinite(t) && Number.isFinite(now) ? Math.floor((now - t) / 1000) : undefined;
}

/** `Dec 5`, or `Dec 5, 2025` when it is not the year of `now`: the local date. */
function localDate(d: Date, now: number): string {
  const day = `${MONTHS[d.getMonth()]} ${d.getDate()}`;
  return d.getFullYear() === new Date(now).getFullYear() ? day : `${day}, ${d.getFullYear()}`;
}

/**
 * `Dec 5, 14:03` (`Dec 5, 2025, 14:03` in another year): the local date and time to the minute.
 * Text that is not a time is returned as it is.
 */
export function localDateTime(iso: string, now: number): string {
  const t = Date.parse(iso);
  if (!Number.isFinite(t)) return iso;
  const d = new Date(t);
  return `${localDate(d, now)}, ${pad2(d.getHours())}:${pad2(d.getMinutes())}`;
}

/**
 * `just now`, `5 min ago`, `3 h ago`, `2 d ago`, `in 20 min` (a time ahead, such as an expiry);
 * past a week the local date (`Nov 28`, `Nov 28, 2025`). Within a minute either way is `just now`,
 * so clocks a few seconds apart read alike. Text that is not a time is returned as it is.
 */
export function relativeTime(iso: string, now: number): string {
  const s = secondsAgo(iso, now);
  if (s === undefined) return iso;
  const a = Math.abs(s);
  if (a < MINUTE) return 'just now';
  if (a >= RECENT) return localDate(new Date(Date.parse(iso)), now);
  const amount =
    a < HOUR
      ? `${Math.floor(a / MINUTE)} min`
      : a < DAY
        ? `${Math.floor(a / HOUR)} h`
        : `${Math.floor(a / DAY)} d`;
  return s > 0 ? `${amount} ago` : `in ${amount}`;
}

/**
 * The time where precision matters (a tooltip, the decision modal, the terminal's prompt): the local
 * date and time, and while it is recent how long ago, `Dec 5, 14:03 (5 min ago)`.
 */
export function whenText(iso: string, now: number): string {
  const s = secondsAgo(iso, now);
  if (s === undefined) return iso;
  const exact = localDateTime(iso, now);
  return Math.abs(s) < RECENT ? `${exact} (${relativeTime(iso, now)})` : exact;
}

/**
 * The shortest time that still says when (a tree row's description): `14:03` on the day of `now`,
 * the local date (`Dec 5`) on any other. Text that is not a time is returned as it is.
 */
export function clockOrDate(iso: string, now: number): string {
  const t = Date.parse(iso);
  if (!Number.isFinite(t)) return iso;
  const d = new Date(t);
  const today = new Date(now);
  const sameDay =
    d.getFullYear() === today.getFullYear() &&
    d.getMonth() === today.getMonth() &&
    d.getDate() === today.getDate();
  return sameDay ? `${pad2(d.getHours())}:${pad2(d.getMinutes())}` : localDate(d, now);
}
