// nats-server's text log lines, as an option (FLOTILLA_LOG_FORMAT=nats): `[pid] 2026/12/02 06:49:28.689954
// [INF] message key=value …` — the pid, local time to the microsecond, the level label (INF, DBG, TRC, WRN,
// ERR, FTL), then the message and pino's fields. Tools that read nats-server's logs read these.

const LABELS: Record<number, string> = { 10: 'TRC', 20: 'DBG', 30: 'INF', 40: 'WRN', 50: 'ERR', 60: 'FTL' };
const OMITTED = new Set(['level', 'time', 'msg', 'pid', 'hostname']);

/** One pino JSON line in nats-server's format (without newline); a line that is not JSON comes back unchanged. */
export function natsLogLine(line: string): string {
  let rec: Record<string, unknown>;
  try {
    rec = JSON.parse(line) as Record<string, unknown>;
  } catch {
    return line;
  }
  if (rec === null || typeof rec !== 'object') return line;
  const time = typeof rec['time'] === 'number' ? rec['time'] : Date.now();
  const pid = typeof rec['pid'] === 'number' ? rec['pid'] : process.pid;
  const label = LABELS[Number(rec['level'])] ?? 'INF';
  const fields: string[] = [];
  for (const [k, v] of Object.entries(rec)) {
    if (OMITTED.has(k) || v === undefined) continue;
    fields.push(`${k}=${typeof v === 'string' ? (/[\s"=]/.test(v) || v === '' ? JSON.stringify(v) : v) : JSON.stringify(v)}`);
  }
  const msg = typeof rec['msg'] === 'string' ? rec['msg'] : '';
  return [`[${pid}] ${natsLogTime(time)} [${label}]`, msg, ...fields].filter((p) => p !== '').join(' ');
}

/** Go's "2006/01/02 15:04:05.000000" in local time. */
export function natsLogTime(ms: number): string {
  const d = new Date(ms);
  const p = (n: number, w = 2): string => String(n).padStart(w, '0');
  return `${d.getFullYear()}/${p(d.getMonth() + 1)}/${p(d.getDate())} ${p(d.getHours())}:${p(d.getMinutes())}:${p(d.getSeconds())}.${p(d.getMilliseconds() * 1000, 6)}`;
}

interface Sink {
  write(chunk: string): boolean;
  flush?(cb?: (err?: Error) => void): void;
  flushSync?(): void;
  end?(): void;
}

/** A pino destination that rewrites each record into nats-server's format before `inner` gets it. */
export function natsTextDestination(inner: Sink): Sink {
  return {
    write(chunk: string): boolean {
      let text = '';
      for (const line of chunk.split('\n')) if (line !== '') text += natsLogLine(line) + '\n';
      return inner.write(text);
    },
    flush: (cb?: (err?: Error) => void) => (inner.flush ? inner.flush(cb) : cb?.()),
    flushSync: () => inner.flushSync?.(),
    end: () => inner.end?.(),
  };
}
