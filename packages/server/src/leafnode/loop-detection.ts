// Leafnode loop detection (nats-server's `$LDS.` subjects): each account of this server has one subject of
// its own that every link of the account announces with LS+. If a link receives that same subject back,
// this server's interest went round a loop and came back: the link is closed with nats-server's error.
import { randomBytes } from 'node:crypto';

export const LOOP_DETECTION_PREFIX = '$LDS.';
/** nats-server's leafNodeReconnectDelayAfterLoopDetected */
export const LOOP_RECONNECT_DELAY_MS = 30_000;

export class LoopDetection {
  private readonly byAccount = new Map<string, string>();

  subjectFor(account: string): string {
    let s = this.byAccount.get(account);
    if (s === undefined) {
      s = LOOP_DETECTION_PREFIX + randomBytes(11).toString('base64url').toUpperCase().replace(/[^A-Z0-9]/g, 'X');
      this.byAccount.set(account, s);
    }
    return s;
  }

  isOwn(account: string, subject: string): boolean {
    return subject.startsWith(LOOP_DETECTION_PREFIX) && this.byAccount.get(account) === subject;
  }
}

/** The -ERR text nats-server sends (and the solicited side recognises by "Loop detected"). */
export function loopDetectedError(account: string, delayMs: number): string {
  return `Loop detected for leafnode account=${JSON.stringify(account)}. Delaying attempt to reconnect for ${delayMs / 1000}s`;
}
