// The log file (`log_file` / `-l`) as nats-server's file logger keeps it: appended to, reopened by name on
// SIGUSR1 (after logrotate moved it), and with `logfile_size_limit` rotated in place once it grows past the
// limit — renamed to `<file>.YYYY.MM.DD.hh.mm.ss.nnnnnnnnn` and started afresh with a "Rotated log" line;
// with `logfile_max_num` only that many files (the live one included) are kept, the oldest backups purged.
// A config reload can point it at another file or change the limits.
import { readdirSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import pino from 'pino';

type Destination = ReturnType<typeof pino.destination>;

export interface LogFileLimits {
  /** 0: never rotate */
  sizeLimitBytes: number;
  /** 0: keep every backup */
  maxFiles: number;
}

/** Lines the sink writes itself (rotation notes), in the format the logger writes. */
export type NoteLine = (level: 'info' | 'error', msg: string) => string;

const BACKUP_STAMP = /^\d{4}\.\d{2}\.\d{2}\.\d{2}\.\d{2}\.\d{2}\.\d{9}$/;

export class LogFileSink {
  private dest: Destination;
  private bytes: number;

  constructor(
    private path: string,
    private limits: LogFileLimits,
    private readonly note: NoteLine,
  ) {
    this.dest = LogFileSink.open(path);
    this.bytes = sizeOf(path);
  }

  get file(): string {
    return this.path;
  }

  /** pino's destination interface: one record per call. */
  write(chunk: string): boolean {
    const ok = this.dest.write(chunk);
    this.bytes += Buffer.byteLength(chunk);
    if (this.limits.sizeLimitBytes > 0 && this.bytes > this.limits.sizeLimitBytes) this.rotate();
    return ok;
  }

  flush(cb?: (err?: Error) => void): void {
    if (cb) this.dest.flush(cb);
    else this.dest.flush();
  }

  flushSync(): void {
    try {
      this.dest.flushSync();
    } catch {
      // a write under way (EAGAIN): its bytes land anyway
    }
  }

  /** SIGUSR1: the file was moved away (logrotate); write to a new one by the same name. */
  reopen(): void {
    this.dest.reopen();
    this.bytes = sizeOf(this.path);
  }

  /** A reload's log_file / logfile_size_limit / logfile_max_num. */
  reconfigure(path: string, limits: LogFileLimits): void {
    this.limits = limits;
    if (path !== this.path) {
      const old = this.dest;
      this.flushSync();
      this.path = path;
      this.dest = LogFileSink.open(path);
      this.bytes = sizeOf(path);
      old.end();
    }
    if (limits.sizeLimitBytes > 0 && this.bytes > limits.sizeLimitBytes) this.rotate();
  }

  end(): void {
    this.flushSync();
    this.dest.end();
  }

  private rotate(): void {
    this.flushSync();
    const backup = `${this.path}.${backupStamp(new Date(), process.hrtime.bigint())}`;
    try {
      renameSync(this.path, backup);
    } catch (err) {
      // nats-server doubles the limit and tries again later
      this.limits = { ...this.limits, sizeLimitBytes: this.limits.sizeLimitBytes * 2 };
      this.dest.write(this.note('error', `Unable to rotate logfile (${(err as Error).message}), will attempt next rotation at size ${this.limits.sizeLimitBytes}`));
      return;
    }
    // the name never points nowhere (the reopen below is asynchronous): tools tailing it keep finding a file
    try {
      writeFileSync(this.path, '', { flag: 'a' });
    } catch {
      // the reopen reports it
    }
    this.dest.reopen();
    const line = this.note('info', `Rotated log, backup saved as ${JSON.stringify(backup)}`);
    this.dest.write(line);
    this.bytes = Buffer.byteLength(line);
    if (this.limits.maxFiles > 0) this.purge();
  }

  /** Keeps `maxFiles - 1` backups (the newest: their names sort by time). */
  private purge(): void {
    const dir = dirname(this.path);
    const base = basename(this.path);
    let backups: string[];
    try {
      backups = readdirSync(dir)
        .filter((f) => f.startsWith(`${base}.`) && BACKUP_STAMP.test(f.slice(base.length + 1)))
        .sort();
    } catch (err) {
      this.dest.write(this.note('error', `Unable to read directory ${JSON.stringify(dir)} for log purge (${(err as Error).message}), will attempt next rotation`));
      return;
    }
    const excess = backups.length - (this.limits.maxFiles - 1);
    for (const name of backups.slice(0, Math.max(0, excess))) {
      try {
        rmSync(join(dir, name));
      } catch (err) {
        this.dest.write(this.note('error', `Unable to remove backup log file ${JSON.stringify(name)} (${(err as Error).message}), will attempt next rotation`));
        return;
      }
      this.dest.write(this.note('info', `Purged log file ${JSON.stringify(name)}`));
    }
  }

  private static open(path: string): Destination {
    const dest = pino.destination({ dest: path, mkdir: true, sync: false });
    // A full disk must not crash or wedge the broker.
    dest.on('error', () => undefined);
    return dest;
  }
}

function sizeOf(path: string): number {
  try {
    return statSync(path).size;
  } catch {
    return 0;
  }
}

/** nats-server's backup suffix: local time to the nanosecond (the sub-millisecond digits from the monotonic clock). */
function backupStamp(now: Date, hr: bigint): string {
  const p = (n: number, w = 2): string => String(n).padStart(w, '0');
  const nanos = now.getMilliseconds() * 1_000_000 + Number(hr % 1_000_000n);
  return `${now.getFullYear()}.${p(now.getMonth() + 1)}.${p(now.getDate())}.${p(now.getHours())}.${p(now.getMinutes())}.${p(now.getSeconds())}.${p(nanos, 9)}`;
}
