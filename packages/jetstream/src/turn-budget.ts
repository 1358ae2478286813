// How much synchronous work chained promise reactions may do before they give the event loop back. A chain
// of already-resolved promises (a memory store's flush, say) runs as microtasks, which starve I/O: two
// streams feeding each other through consumers would otherwise never let a socket, a timer or /healthz run.

/**
 * A budget of work units per event-loop turn, shared by every caller in the process: `take` says whether
 * the work may run now; once the turn's budget is spent it is false until a setImmediate (after I/O) resets it.
 */
export class TurnBudget {
  private used = 0;
  private resetScheduled = false;

  constructor(readonly unitsPerTurn: number) {}

  take(units: number): boolean {
    if (!this.resetScheduled) {
      this.resetScheduled = true;
      setImmediate(() => {
        this.used = 0;
        this.resetScheduled = false;
      });
    }
    if (this.used >= this.unitsPerTurn) return false;
    this.used += units;
    return true;
  }
}

/** Messages stored streams may release (ack, announce to consumers) per event-loop turn, all streams together. */
export const storedMessagesPerTurn = new TurnBudget(2048);
