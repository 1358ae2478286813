// The timer of a coalesced state write (consumer state files, replicated consumer state): the next write
// runs after `waitMs`, or in the next event-loop turn when nothing is to be waited for — never inside the
// change that asked for it, so every change of that turn goes into the one write.

/** Calls `fn` after `waitMs` (0: at setImmediate); returns the function that cancels it. */
export function scheduleWrite(waitMs: number, fn: () => void): () => void {
  if (waitMs === 0) {
    const t = setImmediate(fn);
    return () => clearImmediate(t);
  }
  const t = setTimeout(fn, waitMs);
  return () => clearTimeout(t);
}
