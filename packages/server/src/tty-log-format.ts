// Readable log lines for a terminal: pino writes JSON; on a TTY (or FLOTILLA_LOG_FORMAT=pretty) each line
// becomes `12:34:56.789 INFO  message key=value …`. No dependency: pino-pretty is not installed.

const LEVELS: Record<number, { name: string; color: string }> = {
  10: { name: 'TRACE', color: '\x1b[90m' },
  20: { name: 'DEBUG', color: '\x1b[36m' },
  30: { name: 'INFO ', color: '\x1b[32m' },
  40: { name: 'WARN ', color: '\x1b[33m' },
  50: { name: 'ERROR', color: '\x1b[31m' },
  60: { name: 'FATAL', color: '\x1b[35m' },
};
const RESET = '\x1b[0m';
const DIM = '\x1b[2m';
/** Fields every line has, shown in their own columns or not at all. */
const OMITTED = new Set(['level', 'time', 'msg', 'pid', 'hostname']);

/** One pino JSON line as readable text (without newline); a line that is not JSON comes back unchanged. */
export function formatLogLine(line: string, colors: boolean): string {
  let rec: Record<string, unknown>;
  try {
    rec = JSON.parse(line) as Record<string, unknown>;
  } catch {
    return line;
  }
  if (rec === null || typeof rec !== 'object') return line;
  const time = typeof rec['time'] === 'number' ? new Date(rec['time']).toISOString().slice(11, 23) : '';
  const level = LEVELS[Number(rec['level'])] ?? { name: String(rec['level']).padEnd(5), color: '' };
  const fields: string[] = [];
  for (const [k, v] of Object.entries(rec)) {
    if (OMITTED.has(k) || v === undefined) continue;
    const text = typeof v === 'string' ? (/[\s"=]/.test(v) || v === '' ? JSON.stringify(v) : v) : JSON.stringify(v);
    fields.push(colors ? `${DIM}${k}=${RESET}${text}` : `${k}=${text}`);
  }
  const msg = typeof rec['msg'] === 'string' ? rec['msg'] : '';
  const head = colors ? `${DIM}${time}${RESET} ${level.color}${level.name}${RESET}` : `${time} ${level.name}`;
  return [head, msg, ...fields].filter((p) => p !== '').join(' ');
}

/** A pino destination that writes formatted lines to `out` (stdout). */
export function prettyDestination(out: NodeJS.WriteStream, colors: boolean): { write(chunk: string): boolean; flush(): void } {
  return {
    write(chunk: string): boolean {
      // pino writes one record per call, newline-terminated.
      let text = '';
      for (const line of chunk.split('\n')) if (line !== '') text += formatLogLine(line, colors) + '\n';
      try {
        return out.write(text);
      } catch {
        return true; // a closed terminal must not crash the broker
      }
    },
    flush(): void {
      // process.stdout on a TTY writes synchronously
    },
  };
}

/** Pretty output: FLOTILLA_LOG_FORMAT=pretty, or stdout is a terminal and the format is not forced to json. */
export function wantsPrettyLogs(env: NodeJS.ProcessEnv, stdoutIsTty: boolean): boolean {
  const format = env['FLOTILLA_LOG_FORMAT'];
  if (format === 'json') return false;
  return format === 'pretty' || stdoutIsTty;
}
