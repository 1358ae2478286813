// A latency-percentile chart as a hand-written SVG: one panel per workload that measured latency, one
// line per server; x is the percentile on the usual "nines" scale (50, 90, 99, 99.9 …), y the latency in
// milliseconds on a log scale.
import { LatencyHistogram } from './latency-histogram.js';

const PANEL_W = 480;
const PANEL_H = 300;
const MARGIN = { left: 64, right: 16, top: 40, bottom: 44 };
const COLUMNS = 2;
const COLORS = ['#1f77b4', '#ff7f0e', '#2ca02c', '#d62728', '#9467bd'];
const NINES_TICKS = [
  [0, '0'],
  [Math.log10(2), '50'],
  [1, '90'],
  [2, '99'],
  [3, '99.9'],
  [4, '99.99'],
  [5, '99.999'],
];
const STEPS_PER_NINE = 20;

const esc = (s) => String(s).replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
const num = (x) => (Math.round(x * 10) / 10).toString();

/**
 * @param summary  bench-report summarize() output (entries with byTarget[t].histogram)
 * @param targets  server names, in legend order
 */
export function latencyChartSvg(summary, targets, title) {
  const panels = summary.filter((s) => targets.some((t) => s.byTarget[t]?.histogram));
  const rows = Math.max(1, Math.ceil(panels.length / COLUMNS));
  const width = PANEL_W * Math.min(COLUMNS, Math.max(1, panels.length));
  const legendH = 28;
  const height = 36 + legendH + rows * PANEL_H + 20;
  const parts = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" font-family="sans-serif" font-size="11">`,
    `<rect width="100%" height="100%" fill="#fff"/>`,
    `<text x="${width / 2}" y="22" text-anchor="middle" font-size="15" font-weight="bold">${esc(title)}</text>`,
  ];
  targets.forEach((t, i) => {
    const x = 16 + i * 170;
    parts.push(`<line x1="${x}" y1="${40}" x2="${x + 24}" y2="${40}" stroke="${COLORS[i % COLORS.length]}" stroke-width="2.5"/>`);
    parts.push(`<text x="${x + 30}" y="${44}">${esc(t)}</text>`);
  });
  if (panels.length === 0) parts.push(`<text x="16" y="${36 + legendH + 20}">no latency samples</text>`);
  panels.forEach((s, i) => {
    const ox = (i % COLUMNS) * PANEL_W;
    const oy = 36 + legendH + Math.floor(i / COLUMNS) * PANEL_H;
    parts.push(panel(s, targets, ox, oy));
  });
  parts.push(`<text x="16" y="${height - 8}" fill="#555">request to reply or ack; rounds and client processes merged; both axes logarithmic</text>`);
  parts.push('</svg>');
  return parts.join('\n') + '\n';
}

function panel(s, targets, ox, oy) {
  const hists = targets.map((t) => (s.byTarget[t]?.histogram ? LatencyHistogram.fromJSON(s.byTarget[t].histogram) : null));
  // x reaches as many nines as the largest sample count supports
  const maxNines = Math.max(1, Math.min(5, Math.floor(Math.log10(Math.max(...hists.map((h) => h?.total ?? 1))))));
  const curves = hists.map((h) => {
    if (!h) return null;
    const nines = Math.min(maxNines, Math.log10(Math.max(h.total, 1)));
    const pts = [];
    for (let k = 0; k <= Math.ceil(nines * STEPS_PER_NINE); k++) {
      const x = Math.min(nines, k / STEPS_PER_NINE);
      const p = 100 * (1 - Math.pow(10, -x));
      pts.push([x, Math.max(h.percentileUs(p), 1) / 1000]);
    }
    return pts;
  });
  const ys = curves.flatMap((c) => (c ? c.map(([, y]) => y) : []));
  const yMin = Math.pow(10, Math.floor(Math.log10(Math.min(...ys))));
  const yMax = Math.pow(10, Math.ceil(Math.log10(Math.max(...ys) * 1.0001)));
  const pw = PANEL_W - MARGIN.left - MARGIN.right;
  const ph = PANEL_H - MARGIN.top - MARGIN.bottom;
  const px = (x) => ox + MARGIN.left + (x / maxNines) * pw;
  const py = (y) => oy + MARGIN.top + ph - ((Math.log10(y) - Math.log10(yMin)) / (Math.log10(yMax) - Math.log10(yMin) || 1)) * ph;
  const out = [`<g>`, `<text x="${ox + PANEL_W / 2}" y="${oy + 22}" text-anchor="middle" font-size="12" font-weight="bold">${esc(s.label)}</text>`];
  out.push(`<rect x="${px(0)}" y="${py(yMax)}" width="${pw}" height="${ph}" fill="none" stroke="#888"/>`);
  for (const [x, label] of NINES_TICKS.filter(([x]) => x <= maxNines)) {
    out.push(`<line x1="${num(px(x))}" y1="${py(yMax)}" x2="${num(px(x))}" y2="${py(yMin)}" stroke="#e4e4e4"/>`);
    out.push(`<text x="${num(px(x))}" y="${py(yMin) + 14}" text-anchor="middle">${label}</text>`);
  }
  for (let e = Math.log10(yMin); e <= Math.log10(yMax) + 1e-9; e++) {
    const y = Math.pow(10, e);
    out.push(`<line x1="${px(0)}" y1="${num(py(y))}" x2="${px(maxNines)}" y2="${num(py(y))}" stroke="#e4e4e4"/>`);
    out.push(`<text x="${px(0) - 6}" y="${num(py(y) + 4)}" text-anchor="end">${y >= 1 ? y : y.toPrecision(1)}</text>`);
  }
  out.push(`<text x="${ox + MARGIN.left + pw / 2}" y="${oy + PANEL_H - 10}" text-anchor="middle">percentile</text>`);
  out.push(`<text transform="translate(${ox + 16} ${oy + MARGIN.top + ph / 2}) rotate(-90)" text-anchor="middle">latency (ms)</text>`);
  curves.forEach((c, i) => {
    if (!c) return;
    const d = c.map(([x, y], k) => `${k === 0 ? 'M' : 'L'}${num(px(x))} ${num(py(y))}`).join(' ');
    out.push(`<path d="${d}" fill="none" stroke="${COLORS[i % COLORS.length]}" stroke-width="2"/>`);
  });
  out.push('</g>');
  return out.join('\n');
}
