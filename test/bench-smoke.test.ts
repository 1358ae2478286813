// flotilla-bench: its report pieces on made-up runs (ratios, percentiles, the SVG), and a smoke run of the
// real tool against the built server — tiny counts, asserting that every workload ran, not how fast.
import { describe, it, expect } from 'vitest';
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { LatencyHistogram } from '../scripts/bench/latency-histogram.js';
import { BenchResults, summarize, formatTables } from '../scripts/bench/bench-report.js';
import { latencyChartSvg } from '../scripts/bench/latency-chart-svg.js';

const BENCH_BIN = fileURLToPath(new URL('../bin/flotilla-bench.js', import.meta.url));

interface Outcome {
  code: number | null;
  out: string;
}

function runBench(args: string[], timeoutMs: number): Promise<Outcome> {
  const proc = spawn(process.execPath, [BENCH_BIN, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  proc.stdout.on('data', (d: Buffer) => (out += d.toString()));
  proc.stderr.on('data', (d: Buffer) => (out += d.toString()));
  const timer = setTimeout(() => proc.kill('SIGKILL'), timeoutMs);
  return new Promise((resolve) =>
    proc.once('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, out });
    }),
  );
}

function histogramOf(fromUs: number, toUs: number) {
  const h = new LatencyHistogram();
  for (let us = fromUs; us <= toUs; us++) h.recordUs(us);
  return h;
}

describe('bench report', () => {
  it('histogram percentiles are within the 2 % bucket width, and merge adds samples', () => {
    const h = histogramOf(1, 1_000);
    expect(h.total).toBe(1_000);
    expect(Math.abs(h.percentileUs(50) - 500) / 500).toBeLessThan(0.02);
    expect(Math.abs(h.percentileUs(99) - 990) / 990).toBeLessThan(0.02);
    expect(h.percentileUs(100)).toBe(1_000);
    const merged = LatencyHistogram.fromJSON(JSON.parse(JSON.stringify(h.toJSON()))).merge(histogramOf(2_001, 3_000));
    expect(merged.total).toBe(2_000);
    expect(merged.maxUs).toBe(3_000);
    expect(Math.abs(merged.percentileUs(75) - 2_500) / 2_500).toBeLessThan(0.02);
  });

  it('medians per server, ratio against nats-server, latency table, and an SVG line per server', () => {
    const results = new BenchResults();
    for (const [value, lat] of [[100, 1_000], [300, 1_000], [200, 1_000]] as const) {
      results.record('js-pub-sync-r1', 'flotilla', { value, hist: histogramOf(lat, lat + 999) });
    }
    for (const value of [150, 160, 170]) results.record('js-pub-sync-r1', 'nats-server', { value, hist: histogramOf(100, 1_099) });
    results.record('core-pubsub-16', 'flotilla', { value: NaN, error: 'server: did not start' });
    const workloads = [
      { id: 'js-pub-sync-r1', label: 'sync publish', unit: 'msgs/s', shape: 'single' },
      { id: 'core-pubsub-16', label: 'pub sub', unit: 'msgs/s', shape: 'single' },
    ];
    const targets = ['flotilla', 'nats-server'];
    const summary = summarize(results, workloads, targets, (w: { label: string }) => w.label);
    expect(summary[0].byTarget.flotilla.median).toBe(200);
    expect(summary[0].byTarget['nats-server'].median).toBe(160);
    expect(summary[0].ratios['flotilla/nats-server']).toBe(1.25);
    expect(summary[0].byTarget.flotilla.latencyMs.samples).toBe(3_000);
    expect(summary[0].byTarget.flotilla.latencyMs.p50).toBeCloseTo(1.5, 1);
    expect(summary[1].byTarget.flotilla.median).toBeNaN();
    expect(summary[1].ratios).toEqual({});

    const table = formatTables(summary, targets);
    expect(table).toMatch(/sync publish\s+msgs\/s\s+200\s+160\s+1\.25x/);
    expect(table).toMatch(/pub sub\s+msgs\/s\s+n\/a\s+—/);
    expect(table).toContain('p99.9');

    const svg = latencyChartSvg(summary, targets, 'chart <test>');
    expect(svg.startsWith('<svg xmlns="http://www.w3.org/2000/svg"')).toBe(true);
    expect(svg.trimEnd().endsWith('</svg>')).toBe(true);
    expect(svg).toContain('chart &lt;test&gt;');
    expect(svg.match(/<path /g)).toHaveLength(2); // one panel (the only workload with latencies), two servers
    expect(svg).not.toContain('NaN');
  });
});

describe('flotilla-bench smoke', () => {
  it('rejects an unknown suite with exit status 2 and prints the usage', async () => {
    const r = await runBench(['nonsense'], 15_000);
    expect(r.code).toBe(2);
    expect(r.out).toContain('unknown suite nonsense');
    expect(r.out).toContain('usage: flotilla-bench');
  });

  it('runs the core workloads (RSS with 50 idle connections, pub→sub, request/reply) on Flotilla and writes the JSON', async () => {
    const doc = await smokeRun(['core'], false);
    expect(doc.servers.map((s: { name: string }) => s.name)).toEqual(['flotilla']);
    expect(doc.workloads.map((w: Workload) => w.id)).toEqual(['core-conns-rss', 'core-pubsub-16', 'core-pubsub-128', 'core-pubsub-acct1', 'core-pubsub-acct3', 'core-ws-pubsub-16', 'core-ws-pubsub-128', 'core-ws-to-tcp-128', 'core-reqrep']);
    const byId = checkEveryRun(doc);
    // a pub→sub run is bounded by its count: every message arrived
    expect(byId['core-pubsub-16']!.byTarget.flotilla.runs[0].ops).toBe(20_000);
    expect(byId['core-pubsub-128']!.byTarget.flotilla.runs[0].ops).toBe(20_000);
    // users of accounts: in one account, and across a stream import between two of three
    expect(byId['core-pubsub-acct1']!.byTarget.flotilla.runs[0].ops).toBe(20_000);
    expect(byId['core-pubsub-acct3']!.byTarget.flotilla.runs[0].ops).toBe(20_000);
    expect(byId['core-conns-rss']!.byTarget.flotilla.runs[0].ops).toBe(50);
    expect(byId['core-conns-rss']!.byTarget.flotilla.median).toBeLessThan(4_096); // MB: a plausible RSS
    const l = byId['core-reqrep']!.byTarget.flotilla.latencyMs;
    expect(l.samples).toBeGreaterThan(0);
    expect(l.p99).toBeGreaterThanOrEqual(l.p50);
  }, 30_000);

  it('runs the R1 JetStream and KV workloads on Flotilla and writes the JSON and the SVG', async () => {
    const doc = await smokeRun(['js'], true);
    expect(doc.workloads.map((w: Workload) => w.id)).toEqual(['js-pub-sync-r1', 'js-pub-async-r1', 'js-counter-r1', 'js-pull-r1', 'js-push-r1', 'kv-put-r1', 'kv-get-r1', 'js-pub-async-r1-persist-async', 'js-atomic-batch100-r1', 'js-fast-batch-r1']);
    const byId = checkEveryRun(doc);
    // both drains read the whole stream the windowed publish filled: the same count, at least every ack
    const acked = byId['js-pub-async-r1']!.byTarget.flotilla.runs[0].ops;
    const pulled = byId['js-pull-r1']!.byTarget.flotilla.runs[0].ops;
    expect(pulled).toBeGreaterThanOrEqual(acked);
    expect(byId['js-push-r1']!.byTarget.flotilla.runs[0].ops).toBe(pulled);
    // Atomic batches commit whole: whole batches of 100 only.
    expect(byId['js-atomic-batch100-r1']!.byTarget.flotilla.runs[0].ops % 100).toBe(0);
    // A fast batch's ops are the count its commit PubAck reports: the messages stored.
    expect(byId['js-fast-batch-r1']!.byTarget.flotilla.runs[0].ops).toBeGreaterThan(0);
    for (const id of ['js-pub-sync-r1', 'js-pub-async-r1', 'js-counter-r1', 'kv-put-r1', 'kv-get-r1', 'js-pub-async-r1-persist-async', 'js-atomic-batch100-r1', 'js-fast-batch-r1']) {
      const l = byId[id]!.byTarget.flotilla.latencyMs;
      expect(l.samples, id).toBeGreaterThan(0);
      expect(l.p99, id).toBeGreaterThanOrEqual(l.p50);
    }
    expect(doc.svg.startsWith('<svg')).toBe(true);
    expect(doc.svg.match(/<path /g)).toHaveLength(8); // a panel per latency workload, one server
  }, 30_000);

  it('runs the R3 publish workloads on a three-node Flotilla cluster', async () => {
    const doc = await smokeRun(['cluster'], false);
    expect(doc.workloads.map((w: Workload) => w.id)).toEqual(['js-pub-sync-r3', 'js-pub-async-r3']);
    const byId = checkEveryRun(doc);
    for (const id of ['js-pub-sync-r3', 'js-pub-async-r3']) {
      const l = byId[id]!.byTarget.flotilla.latencyMs;
      expect(l.samples, id).toBe(byId[id]!.byTarget.flotilla.runs[0]!.ops);
      expect(l.p99, id).toBeGreaterThanOrEqual(l.p50);
    }
  }, 30_000);
});

interface Workload {
  id: string;
  byTarget: Record<string, { median: number; runs: { ops: number; errors: number; firstError: string | null }[]; latencyMs: { p50: number; p99: number; samples: number } }>;
}

/** `flotilla-bench --smoke <suites> --compare none --json … [--svg …]`: the JSON document (+ svg text). */
async function smokeRun(suites: string[], withSvg: boolean) {
  const dir = mkdtempSync(join(tmpdir(), 'flotilla-bench-smoke-'));
  try {
    const json = join(dir, 'bench.json');
    const svg = join(dir, 'latency.svg');
    const r = await runBench(['--smoke', ...suites, '--compare', 'none', '--json', json, ...(withSvg ? ['--svg', svg] : [])], 28_000);
    expect(r.out).not.toContain('FAILED');
    expect(r.code).toBe(0);
    const doc = JSON.parse(readFileSync(json, 'utf8'));
    return { ...doc, svg: withSvg ? readFileSync(svg, 'utf8') : '' };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Every workload ran once on Flotilla, measured something and saw no error; returns them by id. */
function checkEveryRun(doc: { workloads: Workload[] }): Record<string, Workload> {
  for (const w of doc.workloads) {
    const cell = w.byTarget['flotilla']!;
    expect(cell.runs, w.id).toHaveLength(1);
    expect(cell.median, w.id).toBeGreaterThan(0);
    expect(cell.runs[0]!.errors, `${w.id}: ${cell.runs[0]!.firstError}`).toBe(0);
  }
  return Object.fromEntries(doc.workloads.map((w) => [w.id, w]));
}
