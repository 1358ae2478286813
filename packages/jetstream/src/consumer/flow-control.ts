// Push flow control (§13): count bytes delivered since the client last answered; ask for an answer once a
// window is unanswered and stop delivering at two windows, as nats-server does (about 1 MiB / 2 MiB).

const WINDOW_BYTES = 1024 * 1024;

export class FlowControlWindow {
  private pendingBytes = 0;
  private outstanding: { subject: string; bytes: number } | null = null;
  private counter = 0;

  constructor(private readonly subjectPrefix: string) {}

  /** The unanswered request's subject (heartbeats name it), or undefined. */
  get outstandingSubject(): string | undefined {
    return this.outstanding?.subject;
  }

  /** True while delivery must wait for the client's answer. */
  stalled(): boolean {
    return this.outstanding !== null && this.pendingBytes >= 2 * WINDOW_BYTES;
  }

  /** Counts a delivery; returns the reply subject of a flow-control request to send now, if one is due. */
  delivered(bytes: number): string | null {
    this.pendingBytes += bytes;
    return this.outstanding === null && this.pendingBytes >= WINDOW_BYTES ? this.newRequest() : null;
  }

  /** The client answered `subject`; returns the next request to send if a window is already unanswered. */
  answered(subject: string): { accepted: boolean; next: string | null } {
    const fc = this.outstanding;
    if (fc === null || subject !== fc.subject) return { accepted: false, next: null };
    this.pendingBytes = Math.max(0, this.pendingBytes - fc.bytes);
    this.outstanding = null;
    return { accepted: true, next: this.pendingBytes >= WINDOW_BYTES ? this.newRequest() : null };
  }

  private newRequest(): string {
    const subject = `${this.subjectPrefix}${(this.counter++).toString(36).padStart(4, '0').slice(-4)}`;
    this.outstanding = { subject, bytes: this.pendingBytes };
    return subject;
  }
}
