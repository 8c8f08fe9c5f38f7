/** The goal's charts, quota burn and reward trend: inline SVG, colours from CSS classes. */
import type { GoalStatusDoc } from '../src/core/views/browser';
import { h, svg } from './dom';
import { BUDGET_LABEL, fmtBudget, fmtDate, plural } from './format';

const W = 360;
const H = 150;
const PAD = { l: 48, r: 14, t: 14, b: 26 };

interface Pt {
  t: number;
  y: number;
  tip: string;
}

function xScale(pts: readonly Pt[]): (i: number) => number {
  const ts = pts.map((p) => p.t);
  const min = Math.min(...ts);
  const max = Math.max(...ts);
  const w = W - PAD.l - PAD.r;
  if (!(max > min)) return (i) => PAD.l + (pts.length === 1 ? w / 2 : (i / Math.max(1, pts.length - 1)) * w);
  return (i) => PAD.l + ((pts[i]!.t - min) / (max - min)) * w;
}

function axisLabels(pts: readonly Pt[], xs: (i: number) => number): SVGElement[] {
  const y = H - 8;
  if (!pts.length) return [];
  const first = fmtDate(new Date(pts[0]!.t).toISOString());
  const out = [svg('text', { x: xs(0), y, 'text-anchor': pts.length === 1 ? 'middle' : 'start' }, first)];
  if (pts.length > 1)
    out.push(
      svg(
        'text',
        { x: xs(pts.length - 1), y, 'text-anchor': 'end' },
        fmtDate(new Date(pts.at(-1)!.t).toISOString()),
      ),
    );
  return out;
}

/** Cumulative spend per run (a step line) against the budget's limit. */
function burnChart(name: string, pts: Pt[], limit: number | undefined, used: number | undefined): SVGElement {
  const maxY = Math.max(1e-9, limit ?? 0, ...pts.map((p) => p.y)) * 1.1;
  const ys = (v: number) => PAD.t + (1 - v / maxY) * (H - PAD.t - PAD.b);
  const xs = xScale(pts);
  const fmt = (v: number) => fmtBudget(name, v);
  const label = `${BUDGET_LABEL[name] ?? name}: ${pts.length ? fmt(pts.at(-1)!.y) : 0} spent over ${plural(pts.length, 'run')}${limit ? `, limit ${fmt(limit)}${used !== undefined ? ` (${fmt(used)} used in the window)` : ''}` : ''}`;
  const root = svg(
    'svg',
    { viewBox: `0 0 ${W} ${H}`, class: 'chart burn', role: 'img', 'aria-label': label },
    svg('title', {}, label),
  );
  root.append(
    svg('line', { class: 'axis', x1: PAD.l, x2: W - PAD.r, y1: ys(0), y2: ys(0) }),
    svg('line', { class: 'axis', x1: PAD.l, x2: PAD.l, y1: PAD.t, y2: ys(0) }),
    svg('text', { x: PAD.l - 6, y: ys(0) + 4, 'text-anchor': 'end' }, '0'),
  );
  if (limit) {
    const y = ys(limit);
    root.append(
      svg('line', { class: 'limit', x1: PAD.l, x2: W - PAD.r, y1: y, y2: y }),
      svg('text', { class: 'limit-label', x: PAD.l + 4, y: y - 5, 'text-anchor': 'start' }, 'limit'),
      svg('text', { x: PAD.l - 6, y: y + 4, 'text-anchor': 'end' }, fmt(limit)),
    );
  }
  if (pts.length) {
    let d = `M${xs(0).toFixed(1)},${ys(0).toFixed(1)}`;
    pts.forEach((p, i) => {
      d += ` H${xs(i).toFixed(1)} V${ys(p.y).toFixed(1)}`;
    });
    const area = `${d} H${xs(pts.length - 1).toFixed(1)} V${ys(0).toFixed(1)} Z`;
    root.append(svg('path', { class: 'area', d: area }), svg('path', { class: 'line', d }));
    pts.forEach((p, i) => {
      const over = limit !== undefined && limit > 0 && p.y > limit;
      root.append(
        svg(
          'circle',
          { class: over ? 'point over' : 'point', cx: xs(i), cy: ys(p.y), r: 3 },
          svg('title', {}, p.tip),
        ),
      );
    });
    if (!limit)
      root.append(
        svg('text', { x: PAD.l - 6, y: ys(pts.at(-1)!.y) + 4, 'text-anchor': 'end' }, fmt(pts.at(-1)!.y)),
      );
    root.append(...axisLabels(pts, xs));
  } else {
    root.append(
      svg('text', { class: 'empty-label', x: W / 2, y: H / 2, 'text-anchor': 'middle' }, 'No runs yet'),
    );
  }
  return root;
}

/** Reward scores (-1..1) over time, with the zero line and the mean. */
function rewardChart(pts: Pt[], mean: number | null): SVGElement {
  const ys = (v: number) => PAD.t + ((1 - v) / 2) * (H - PAD.t - PAD.b);
  const xs = xScale(pts);
  const label = pts.length
    ? `Rewards: ${plural(pts.length, 'score')}, mean ${mean?.toFixed(2) ?? '–'}, latest ${pts.at(-1)!.y}`
    : 'Rewards: none yet';
  const root = svg(
    'svg',
    { viewBox: `0 0 ${W} ${H}`, class: 'chart reward', role: 'img', 'aria-label': label },
    svg('title', {}, label),
  );
  for (const v of [1, 0, -1]) {
    root.append(
      svg('line', { class: v === 0 ? 'axis zero' : 'grid', x1: PAD.l, x2: W - PAD.r, y1: ys(v), y2: ys(v) }),
      svg('text', { x: PAD.l - 6, y: ys(v) + 4, 'text-anchor': 'end' }, v > 0 ? '+1' : String(v)),
    );
  }
  if (pts.length) {
    if (mean !== null) {
      root.append(svg('line', { class: 'mean', x1: PAD.l, x2: W - PAD.r, y1: ys(mean), y2: ys(mean) }));
    }
    if (pts.length > 1)
      root.append(
        svg('polyline', {
          class: 'line',
          points: pts.map((p, i) => `${xs(i).toFixed(1)},${ys(p.y).toFixed(1)}`).join(' '),
        }),
      );
    pts.forEach((p, i) =>
      root.append(
        svg(
          'circle',
          { class: `point ${p.y > 0 ? 'pos' : p.y < 0 ? 'neg' : 'zero'}`, cx: xs(i), cy: ys(p.y), r: 3.5 },
          svg('title', {}, p.tip),
        ),
      ),
    );
    root.append(...axisLabels(pts, xs));
  } else {
    root.append(
      svg(
        'text',
        { class: 'empty-label', x: W / 2, y: H / 2 - 8, 'text-anchor': 'middle' },
        'No rewards yet',
      ),
    );
  }
  return root;
}

/** Quota burn: one small chart per budget with a limit (turns and cost when none is set). */
export function quotaBurn(d: GoalStatusDoc): Node[] {
  const budgets = Object.entries(d.quota.budgets).filter(([, b]) => b.limit > 0);
  const names = budgets.length
    ? budgets.map(([k]) => k)
    : ['turns', ...(d.quota.spend.costUsd > 0 ? ['costUsd'] : [])];
  const burnGrid = h('div', { class: 'charts' });
  for (const k of names) {
    const key = k as 'turns' | 'tokens' | 'costUsd' | 'wallSeconds';
    const b = d.quota.budgets[k];
    const pts = d.burn.map((p) => ({
      t: Date.parse(p.at),
      y: p[key],
      tip: `${p.run_id} · ${fmtDate(p.at)} · ${fmtBudget(k, p[key])} ${BUDGET_LABEL[k]?.toLowerCase() ?? k} so far`,
    }));
    burnGrid.append(
      h(
        'figure',
        { class: 'chart-box' },
        h(
          'figcaption',
          null,
          h('strong', null, BUDGET_LABEL[k] ?? k),
          b
            ? h(
                'span',
                { class: `muted${b.used >= b.limit ? ' over-text' : ''}` },
                ` ${fmtBudget(k, b.used)} of ${fmtBudget(k, b.limit)} used${b.used >= b.limit ? ' (exhausted)' : ''}`,
              )
            : h('span', { class: 'muted' }, ' no limit'),
        ),
        burnChart(k, pts, b?.limit, b?.used),
      ),
    );
  }
  return [
    h(
      'h3',
      null,
      'Quota burn ',
      h(
        'span',
        { class: 'muted small' },
        `(window: ${d.quota.window}${d.quota.cooldown_seconds ? `, cooldown ${d.quota.cooldown_seconds} s` : ''})`,
      ),
    ),
    burnGrid,
  ];
}

export function rewardTrend(d: GoalStatusDoc): Node[] {
  const rpts = d.rewards.trend.map((r) => ({
    t: Date.parse(r.at),
    y: r.score,
    tip: `${r.run_id} · ${fmtDate(r.at)} · score ${r.score}`,
  }));
  const rewardCaption = h(
    'figcaption',
    null,
    h('strong', null, 'Scores'),
    h('span', { class: 'muted' }, d.rewards.count ? ` ${plural(d.rewards.count, 'score')} · ` : ' none yet'),
    d.rewards.mean !== null
      ? h('span', { class: 'mean-text', title: 'the dashed line' }, `mean ${d.rewards.mean.toFixed(2)}`)
      : null,
  );
  return [
    h('h3', null, 'Reward trend'),
    h(
      'div',
      { class: 'charts' },
      h('figure', { class: 'chart-box' }, rewardCaption, rewardChart(rpts, d.rewards.mean)),
    ),
  ];
}
