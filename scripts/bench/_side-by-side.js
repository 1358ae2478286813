// What every side-by-side bench shares: starting a server (flotilla or nats-server, same flags) on free
// ports found through its ports file, medians, and the ratio table.
import { spawn, execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const START_TIMEOUT_MS = 15_000;
const STOP_GRACE_MS = 5_000;

/**
 * Starts `srv.cmd srv.args -a 127.0.0.1 -p -1 --ports_file_dir <dir> ...extraArgs(dir)`; resolves with its
 * client URL and a stop function (SIGTERM, then SIGKILL after a grace period; removes the directory).
 */
export async function startServer(srv, extraArgs = () => []) {
  const dir = mkdtempSync(join(tmpdir(), 'flotilla-bench-'));
  const proc = spawn(srv.cmd, [...srv.args, '-a', '127.0.0.1', '-p', '-1', '--ports_file_dir', dir, ...extraArgs(dir)], {
    stdio: ['ignore', 'ignore', 'ignore'],
  });
  const deadline = Date.now() + START_TIMEOUT_MS;
  let url = null;
  while (!url) {
    const file = readdirSync(dir).find((f) => f.endsWith(`_${proc.pid}.ports`));
    url = file ? natsUrlOf(join(dir, file)) : null;
    if (url) break;
    if (Date.now() > deadline || proc.exitCode !== null) throw new Error(`${srv.name} did not start`);
    await sleep(20);
  }
  const stop = async () => {
    const exited = new Promise((resolve) => proc.once('exit', resolve));
    proc.kill('SIGTERM');
    const t = setTimeout(() => proc.kill('SIGKILL'), STOP_GRACE_MS);
    await exited;
    clearTimeout(t);
    rmSync(dir, { recursive: true, force: true });
  };
  return { proc, url, dir, stop };
}

/** nats-server writes its ports file in place: a half-written one is read again on the next poll. */
function natsUrlOf(path) {
  try {
    return JSON.parse(readFileSync(path, 'utf8')).nats[0] ?? null;
  } catch {
    return null;
  }
}

export function median(values) {
  const s = values.filter((v) => !Number.isNaN(v)).sort((a, b) => a - b);
  return s.length === 0 ? NaN : s[Math.floor(s.length / 2)];
}

/** Medians per server and workload, with a `<name>/nats-server` ratio column for every server listed before nats-server. */
export function printTable(names, workloads, results, footnote) {
  const natsIdx = names.indexOf('nats-server');
  const ratioCols = natsIdx > 0 ? names.slice(0, natsIdx).map((n) => `${n}/nats-server`) : [];
  const header = ['workload', ...names, ...ratioCols];
  const rows = workloads.map((w) => {
    const vals = names.map((n) => median(results.get(`${n}|${w}`) ?? [NaN]));
    const cells = [w, ...vals.map((v) => (Number.isNaN(v) ? 'n/a' : v.toLocaleString('en-US')))];
    for (let i = 0; i < ratioCols.length; i++) {
      const ratio = vals[i] / vals[natsIdx];
      cells.push(Number.isFinite(ratio) ? ratio.toFixed(2) + 'x' : 'n/a');
    }
    return cells;
  });
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)));
  const line = (cells) => cells.map((c, i) => c.padEnd(widths[i])).join('  ');
  console.log('\n' + line(header));
  for (const r of rows) console.log(line(r));
  console.log(footnote);
}

/** Resident set size of a process in MB, from /proc. */
export function rssMb(pid) {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0);
  return Math.round(kb / 102.4) / 10;
}

export function findOnPath(name) {
  try {
    return execFileSync('sh', ['-c', `command -v ${name}`], { encoding: 'utf8' }).trim() || null;
  } catch {
    return null;
  }
}

export function sleep(ms) {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
