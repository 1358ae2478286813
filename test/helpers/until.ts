// Polling for a condition in tests, one definition for every package's tests and the end-to-end tests.

/**
 * Calls `probe` every `intervalMs` until it returns a truthy value, which is returned; throws
 * `timed out waiting for <what>` once `timeoutMs` passed without one.
 */
export async function until<T>(
  probe: () => T | undefined | null | false | Promise<T | undefined | null | false>,
  timeoutMs = 5_000,
  what = 'condition',
  intervalMs = 10,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what} (${timeoutMs} ms)`);
    await new Promise((r) => setTimeout(r, intervalMs));
  }
}

/**
 * `until` polling every `intervalMs`: for tests written against a faster or slower poll (a transient state
 * caught, or a sampler given time), which keep the interval they were written with.
 */
export function untilEvery(intervalMs: number) {
  return <T>(probe: () => T | undefined | null | false | Promise<T | undefined | null | false>, timeoutMs = 5_000, what = 'condition'): Promise<T> =>
    until(probe, timeoutMs, what, intervalMs);
}
