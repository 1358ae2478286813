// Keeps one route (a peer's cluster host:port) linked: dials, and after any close redials with back-off,
// except while the peer is already linked through another connection (the duplicate that lost).
import { Backoff } from './backoff.js';

export interface DialOutcome {
  /** the peer's server id, when its Hello arrived */
  peerId: string | null;
  /** true when the link became active */
  established: boolean;
  /** the refusal code when either side refused the link */
  refused: string | null;
  /** how long the link lived */
  livedMs: number;
}

export interface DialerHost {
  /** Opens a link to `url` and resolves when it has closed. */
  dialOnce(url: string): Promise<DialOutcome>;
  isPeerActive(peerId: string): boolean;
  /** Resolves when `peerId` has no active link any more, or the node stops. */
  waitForPeerDown(peerId: string): Promise<void>;
  readonly stopped: boolean;
}

/** A link that lived this long proves the route healthy again: back-off starts over. */
const HEALTHY_LINK_MS = 2000;

export class RouteDialer {
  /** the server id last seen behind this URL */
  peerId: string | null = null;
  /** true once the URL turned out to be this node itself */
  isSelf = false;
  private readonly backoff: Backoff;
  private wake: (() => void) | null = null;
  private failuresInARow = 0;
  /** set when a config reload removed this route: no more dials */
  private cancelled = false;
  done: Promise<void> = Promise.resolve();

  constructor(
    readonly url: string,
    private readonly host: DialerHost,
    /** configured routes redial forever; gossiped ones give up after this many failures in a row */
    private readonly maxFailuresInARow: number,
    backoffMinMs: number,
    backoffMaxMs: number,
  ) {
    this.backoff = new Backoff(backoffMinMs, backoffMaxMs);
  }

  start(): void {
    this.done = this.run();
  }

  /** Ends the current back-off sleep early (after a heal, say). */
  retryNow(): void {
    this.backoff.reset();
    this.wake?.();
  }

  private async run(): Promise<void> {
    const host = this.host;
    while (!host.stopped && !this.isSelf && !this.cancelled) {
      if (this.peerId !== null && host.isPeerActive(this.peerId)) {
        await host.waitForPeerDown(this.peerId);
        continue;
      }
      const outcome = await host.dialOnce(this.url);
      if (outcome.peerId !== null) this.peerId = outcome.peerId;
      if (outcome.refused === 'self') {
        this.isSelf = true;
        return;
      }
      if (outcome.established || outcome.refused === 'duplicate') this.failuresInARow = 0;
      else if (++this.failuresInARow >= this.maxFailuresInARow) return;
      if (outcome.established && outcome.livedMs >= HEALTHY_LINK_MS) this.backoff.reset();
      // After a lost duplicate this short sleep ends with waiting on the winning link.
      await this.sleep(this.backoff.nextDelayMs());
    }
  }

  private sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.wake = null;
        resolve();
      }, ms);
      this.wake = () => {
        clearTimeout(timer);
        this.wake = null;
        resolve();
      };
    });
  }

  /** Dials no more (the route was removed); a link it made stays until it closes. */
  cancel(): void {
    this.cancelled = true;
    this.wake?.();
  }

  /** Wakes a sleeping dialer so it sees `stopped`. */
  interrupt(): void {
    this.wake?.();
  }
}
