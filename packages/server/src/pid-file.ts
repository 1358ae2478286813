// `pid_file` / `-P`: the process id, written when the server starts (as nats-server's logPid) so
// `flotilla --signal reload=<file>` and init scripts can find the process. Unlike nats-server, the file
// is removed at exit — but only while it still holds this process's pid (another instance may have
// taken the path over).
import { readFileSync, rmSync, writeFileSync } from 'node:fs';

export function writePidFile(path: string, pid = process.pid): void {
  writeFileSync(path, String(pid), { mode: 0o640 });
}

export function removePidFile(path: string, pid = process.pid): void {
  try {
    if (readFileSync(path, 'utf8').trim() === String(pid)) rmSync(path, { force: true });
  } catch {
    // already gone, or unreadable: nothing of ours to remove
  }
}
