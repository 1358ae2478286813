/** Wall-clock nanoseconds: Date.now() anchored once, hrtime for sub-millisecond resolution. */
const epochOffsetNs = BigInt(Date.now()) * 1_000_000n - process.hrtime.bigint();

export type ClockNs = () => bigint;

export const wallClockNs: ClockNs = () => process.hrtime.bigint() + epochOffsetNs;
