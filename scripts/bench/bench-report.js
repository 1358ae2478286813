// From recorded runs to what a user reads: medians per workload and server, ratios against nats-server,
// latency percentiles, as a text table and as a JSON document.
import { LatencyHistogram } from './latency-histogram.js';

export const COMPARED_WITH = 'nats-server';
const PERCENTILES = [
  ['p50', 50],
  ['p90', 90],
  ['p99', 99],
  ['p99.9', 99.9],
];

/** Collects runs: record(workloadId, target, run) with run {value, hist?, …}. */
export class BenchResults {
  constructor() {
    this.cells = new Map(); // `${workloadId}\n${target}` -> {runs: [], hist}
  }

  record(workloadId, target, run) {
    const key = `${workloadId}\n${target}`;
    const cell = this.cells.get(key) ?? { runs: [], hist: new LatencyHistogram() };
    const { hist, ...rest } = run;
    cell.runs.push(rest);
    if (hist) cell.hist.merge(hist);
    this.cells.set(key, cell);
  }

  cell(workloadId, target) {
    return this.cells.get(`${workloadId}\n${target}`) ?? null;
  }
}

export function median(values) {
  const s = values.filter((v) => Number.isFinite(v)).sort((a, b) => a - b);
  if (s.length === 0) return NaN;
  const mid = Math.floor(s.length / 2);
  return s.length % 2 === 1 ? s[mid] : Math.round((s[mid - 1] + s[mid]) / 2);
}

const round2 = (x) => Math.round(x * 100) / 100;
const msOf = (us) => (Number.isFinite(us) ? Math.round(us) / 1000 : null);

/** The JSON-ready summary: per workload, per target, the median and every run; ratios to nats-server. */
export function summarize(results, workloads, targets, labelOf) {
  return workloads.map((w) => {
    const byTarget = {};
    for (const t of targets) {
      const cell = results.cell(w.id, t);
      if (!cell) continue;
      const h = cell.hist;
      byTarget[t] = {
        median: median(cell.runs.map((r) => r.value)),
        runs: cell.runs,
        latencyMs:
          h.total > 0
            ? { ...Object.fromEntries(PERCENTILES.map(([k, p]) => [k, msOf(h.percentileUs(p))])), max: msOf(h.maxUs), samples: h.total }
            : null,
        histogram: h.total > 0 ? h.toJSON() : null,
      };
    }
    const ratios = {};
    const base = byTarget[COMPARED_WITH]?.median;
    for (const t of targets) {
      if (t === COMPARED_WITH || !byTarget[t]) continue;
      const r = byTarget[t].median / base;
      if (Number.isFinite(r)) ratios[`${t}/${COMPARED_WITH}`] = round2(r);
    }
    return { id: w.id, label: labelOf(w), unit: w.unit, shape: w.shape, byTarget, ratios };
  });
}

const fmt = (v) => (Number.isFinite(v) ? Math.round(v).toLocaleString('en-US') : 'n/a');

/** The throughput table (medians, ratio columns) and a latency table, as text. */
export function formatTables(summary, targets) {
  const ratioCols = targets.includes(COMPARED_WITH) ? targets.filter((t) => t !== COMPARED_WITH).map((t) => `${t}/${COMPARED_WITH}`) : [];
  const header = ['workload', 'unit', ...targets, ...ratioCols];
  const rows = summary.map((s) => [
    s.label,
    s.unit,
    ...targets.map((t) => (s.byTarget[t] ? fmt(s.byTarget[t].median) : '—')),
    ...ratioCols.map((c) => (s.ratios[c] !== undefined ? `${s.ratios[c].toFixed(2)}x` : s.byTarget[c.split('/')[0]] ? 'n/a' : '—')),
  ]);
  const out = [textTable(header, rows), '(medians over rounds; higher is better unless marked; — = not run on that server)'];
  const latencyRows = [];
  for (const s of summary) {
    for (const t of targets) {
      const l = s.byTarget[t]?.latencyMs;
      if (!l) continue;
      latencyRows.push([s.label, t, ...PERCENTILES.map(([k]) => String(l[k])), String(l.max), l.samples.toLocaleString('en-US')]);
    }
  }
  if (latencyRows.length > 0) {
    out.push('', textTable(['latency (ms)', 'server', ...PERCENTILES.map(([k]) => k), 'max', 'samples'], latencyRows));
    out.push('(request to reply/ack, all rounds merged; under a window the queueing is included)');
  }
  return out.join('\n');
}

function textTable(header, rows) {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)));
  const line = (cells) => cells.map((c, i) => (i < 2 ? c.padEnd(widths[i]) : c.padStart(widths[i]))).join('  ').trimEnd();
  return [line(header), line(widths.map((w) => '-'.repeat(w))), ...rows.map(line)].join('\n');
}
