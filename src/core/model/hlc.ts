/**
 * Hybrid logical clocks: the order of events written on different clones. A stamp is the wall
 * time in ms (ISO) and a counter, `2026-11-30T19:47:40.123Z.0007`: fixed width, so comparing the
 * strings compares the stamps. A writer stamps each event above every stamp it has seen, so an
 * event always sorts after the events it was written knowing about, whatever the clocks say.
 */
const HLC_PATTERN = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z\.\d{4}$/;
export const HLC_RULE = 'an ISO time in UTC with milliseconds, a dot and a 4-digit counter';
const COUNTER_MAX = 9999;

export function isHlc(s: string): boolean {
  return HLC_PATTERN.test(s) && Number.isFinite(wallMs(s));
}

/** The wall-clock part of a stamp, in ms. */
const wallMs = (h: string) => Date.parse(h.slice(0, 24));

function stamp(ms: number, counter: number): string {
  return `${new Date(ms).toISOString()}.${String(counter).padStart(4, '0')}`;
}

/**
 * The stamp after `seen` (the highest stamp known, or undefined) at wall time `now`: the wall time
 * when it is ahead, else one tick above `seen`. A counter that would overflow moves to the next ms.
 */
export function nextHlc(seen: string | undefined, now: Date): string {
  const wall = now.getTime();
  if (!seen) return stamp(wall, 0);
  const seenMs = wallMs(seen);
  if (wall > seenMs) return stamp(wall, 0);
  const counter = Number(seen.slice(25));
  return counter >= COUNTER_MAX ? stamp(seenMs + 1, 0) : stamp(seenMs, counter + 1);
}

/**
 * How far another writer's stamp may run ahead of this machine's clock: beyond it the event waits
 * (rules/merged-replay.ts). Clocks kept by NTP differ by far less; a wrong clock shows in `verify`.
 */
export const MAX_AHEAD_MS = 5 * 60_000;
const LAST_MS = Date.parse('9999-12-31T23:59:59.999Z');

/** The highest stamp an event may carry and count at `now`. */
export function aheadCutoff(now: Date): string {
  return stamp(Math.min(now.getTime() + MAX_AHEAD_MS, LAST_MS), COUNTER_MAX);
}

/** The larger of two stamps (either may be undefined). */
export function maxHlc(a: string | undefined, b: string | undefined): string | undefined {
  if (a === undefined) return b;
  if (b === undefined) return a;
  return a > b ? a : b;
}
