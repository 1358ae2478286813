import { msToBigNs } from './time-units.js';

/** Wall-clock nanoseconds: Date.now() anchored once, hrtime for sub-millisecond resolution. */
const epochOffsetNs = msToBigNs(Date.now()) - process.hrtime.bigint();

export type ClockNs = () => bigint;

export const wallClockNs: ClockNs = () => process.hrtime.bigint() + epochOffsetNs;
