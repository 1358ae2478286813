// Nanoseconds are JetStream's unit (config durations, message timestamps); timers and Date.now() count
// milliseconds. Every conversion between the two goes through these, so the factor is written once.

const NS_PER_MS = 1_000_000;
const NS_PER_MS_BIG = 1_000_000n;

/** A nanosecond count (a number: `ack_wait`, `duplicate_window`, a pull's `expires`) in milliseconds, fraction kept. */
export function nsToMs(ns: number): number {
  return ns / NS_PER_MS;
}

/** Milliseconds as nanoseconds (a number, as JSON durations such as `active` are written). */
export function msToNs(ms: number): number {
  return ms * NS_PER_MS;
}

/** A bigint nanosecond timestamp or span in whole milliseconds (truncated toward zero). */
export function bigNsToMs(ns: bigint): number {
  return Number(ns / NS_PER_MS_BIG);
}

/** Whole milliseconds (Date.now()) as bigint nanoseconds. */
export function msToBigNs(ms: number): bigint {
  return BigInt(ms) * NS_PER_MS_BIG;
}
