// A process-wide sink for fsync durations, so /metrics can histogram them without the stores knowing about
// Prometheus. One observer (the server's metrics registry); unset, a timed sync costs one null check.

/** `raft_log`: a synced Raft log batch (write + fsync). `stream_store`: a FileStore segment fdatasync. */
export type FsyncKind = 'raft_log' | 'stream_store';

export type FsyncObserver = (kind: FsyncKind, seconds: number) => void;

let observer: FsyncObserver | null = null;

/** Installs (or with null removes) the observer; returns the one it replaced. */
export function setFsyncObserver(next: FsyncObserver | null): FsyncObserver | null {
  const previous = observer;
  observer = next;
  return previous;
}

/** Reports one sync that took `seconds`. */
export function observeFsync(kind: FsyncKind, seconds: number): void {
  if (observer !== null) observer(kind, seconds);
}
