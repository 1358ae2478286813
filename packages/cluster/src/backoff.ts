// Reconnection delays: doubling from a floor to a ceiling, with jitter so peers do not redial in lockstep.
export class Backoff {
  private attempt = 0;

  constructor(
    private readonly minMs = 50,
    private readonly maxMs = 2000,
    private readonly random: () => number = Math.random,
  ) {}

  nextDelayMs(): number {
    const base = Math.min(this.maxMs, this.minMs * 2 ** Math.min(this.attempt, 20));
    this.attempt++;
    // +-20 % jitter
    return Math.round(base * (0.8 + 0.4 * this.random()));
  }

  reset(): void {
    this.attempt = 0;
  }

  get attempts(): number {
    return this.attempt;
  }
}
