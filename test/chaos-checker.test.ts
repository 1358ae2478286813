// Short chaos runs against a local 3-node Flotilla cluster (the CI chaos run): a clean run must end with
// zero violations, and a run with a deliberate bug (PubAck sent before commit, FLOTILLA_TEST_BUGS) must be
// caught as acknowledged messages lost — the proof that the checker can fail.
import { describe, it, expect } from 'vitest';
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const CHAOS_BIN = new URL('../bin/flotilla-chaos.js', import.meta.url).pathname;

interface ChaosSummary {
  seed: number;
  faults: { injected: number; byKind: Record<string, number> };
  streams: Record<string, { acked: number; received: number; replicasRead: string[]; lastSeq: Record<string, number> }>;
  violations: { total: number; byType: Record<string, number> };
  failoverWindows: { streamLeaderFaults: { count: number; maxMs: number | null } };
  runDir: string | null;
}

async function runChaos(args: string[], timeoutMs: number): Promise<{ code: number | null; summary: ChaosSummary; output: string }> {
  const dir = mkdtempSync(join(tmpdir(), 'chaos-test-'));
  const jsonFile = join(dir, 'summary.json');
  const child = spawn(process.execPath, [CHAOS_BIN, '--quiet', '--json', jsonFile, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout.on('data', (d: Buffer) => (output += d.toString()));
  child.stderr.on('data', (d: Buffer) => (output += d.toString()));
  // SIGTERM first: the tool then stops its cluster (no server process outlives the test)
  const timer = setTimeout(() => child.kill('SIGTERM'), timeoutMs);
  const killTimer = setTimeout(() => child.kill('SIGKILL'), timeoutMs + 15_000);
  const code = await new Promise<number | null>((resolve) => child.once('exit', (c) => resolve(c)));
  clearTimeout(timer);
  clearTimeout(killTimer);
  try {
    const summary = JSON.parse(readFileSync(jsonFile, 'utf8')) as ChaosSummary;
    return { code, summary, output };
  } catch {
    throw new Error(`no summary (exit ${code}):\n${output}`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

function removeRunDir(s: ChaosSummary): void {
  if (s.runDir) rmSync(s.runDir, { recursive: true, force: true });
}

describe('chaos checker against Flotilla', () => {
  it('a short run with leader kills and partitions ends with zero violations', async () => {
    const { code, summary, output } = await runChaos(
      ['--duration', '20s', '--seed', '101', '--faults', 'kill-stream-leader,partition-stream-leader,pause-stream-leader', '--fault-gap', '2s', '--rate', '40'],
      85_000,
    );
    removeRunDir(summary);
    expect(summary.violations, output).toEqual({ total: 0, byType: {}, examples: {} });
    expect(code).toBe(0);
    expect(summary.faults.injected).toBeGreaterThanOrEqual(2);
    const s = summary.streams['CHAOS_R3']!;
    expect(s.acked).toBeGreaterThan(100);
    expect(s.received).toBe(s.acked);
    expect(s.replicasRead).toEqual(['n1', 'n2', 'n3']);
    expect(new Set(Object.values(s.lastSeq)).size).toBe(1);
  }, 120_000);

  it('reports acknowledged messages lost when PubAcks go out before commit', async () => {
    const { code, summary, output } = await runChaos(
      ['--duration', '15s', '--seed', '202', '--faults', 'partition-stream-leader,kill-stream-leader', '--fault-gap', '2s', '--rate', '0',
        '--server-env', 'FLOTILLA_TEST_BUGS=pub-ack-before-commit'],
      90_000,
    );
    removeRunDir(summary);
    expect(code, output).toBe(1);
    expect(summary.violations.byType['lost'] ?? 0, output).toBeGreaterThan(0);
    expect(summary.seed).toBe(202);
  }, 120_000);
});
