// Acknowledged publishing as a careful client does it across leader failures: one message at a time, each
// with a Nats-Msg-Id, retried with the same id on a timeout or 503 until acknowledged. Records which
// sequence each payload got and when, so a test can check that nothing acknowledged is lost and measure
// the longest time without an acknowledgement.
import type { JetStreamClient } from 'nats';
import { sleep } from './flotilla-process.js';

const enc = new TextEncoder();

export interface AckRecord {
  payload: string;
  seq: number;
  duplicate: boolean;
  /** Date.now() when the ack arrived */
  atMs: number;
}

export interface PublisherOptions {
  subject: string;
  /** payloads are `${prefix}-${i}`, ids `${prefix}-${i}` too */
  prefix: string;
  /** hard bound on distinct messages */
  maxMessages: number;
  attemptTimeoutMs?: number;
  /** pause before retrying after a 503 / no responders (a timeout retries at once) */
  retryPauseMs?: number;
  /** bound on how long one message may be retried before the run gives up */
  maxRetryMs?: number;
  /** pause after each ack: bounds how many messages a run leaves to read back (the window's resolution) */
  paceMs?: number;
}

export interface PublisherFailures {
  timeouts: number;
  noResponders: number;
  other: string[];
}

/** A background publishing loop: start(), then stop() to end it and get the record. */
export class AckedPublisher {
  readonly acks: AckRecord[] = [];
  readonly failures: PublisherFailures = { timeouts: 0, noResponders: 0, other: [] };
  /** payloads for which at least one attempt was made (acknowledged or not) */
  readonly attempted: string[] = [];
  private stopping = false;
  private done: Promise<void> | null = null;
  private readonly startedAtMs = Date.now();
  giveUpError: Error | null = null;

  constructor(
    private readonly js: JetStreamClient,
    private readonly o: PublisherOptions,
  ) {}

  start(): this {
    this.done = this.run();
    return this;
  }

  async stop(): Promise<this> {
    this.stopping = true;
    await this.done;
    return this;
  }

  /** Waits until `count` more acknowledgements than now have arrived (bounded). */
  async waitForMoreAcks(count: number, timeoutMs: number): Promise<void> {
    const target = this.acks.length + count;
    const deadline = Date.now() + timeoutMs;
    while (this.acks.length < target) {
      if (this.giveUpError) throw this.giveUpError;
      if (this.done && this.stopping) throw new Error('publisher stopped');
      if (Date.now() > deadline) throw new Error(`only ${this.acks.length - (target - count)} of ${count} acks within ${timeoutMs} ms`);
      await sleep(10);
    }
  }

  /** Longest time without an acknowledgement between `fromMs` (default: start) and the last ack. */
  longestGapMs(fromMs = this.startedAtMs): { gapMs: number; endedAtMs: number } {
    let prev = fromMs;
    let best = { gapMs: 0, endedAtMs: fromMs };
    for (const a of this.acks) {
      if (a.atMs < fromMs) continue;
      if (a.atMs - prev > best.gapMs) best = { gapMs: a.atMs - prev, endedAtMs: a.atMs };
      prev = a.atMs;
    }
    return best;
  }

  private async run(): Promise<void> {
    const attemptTimeoutMs = this.o.attemptTimeoutMs ?? 1000;
    const retryPauseMs = this.o.retryPauseMs ?? 50;
    const maxRetryMs = this.o.maxRetryMs ?? 30_000;
    for (let i = 0; i < this.o.maxMessages && !this.stopping; i++) {
      const payload = `${this.o.prefix}-${i}`;
      this.attempted.push(payload);
      const firstAttemptMs = Date.now();
      for (;;) {
        try {
          const ack = await this.js.publish(this.o.subject, enc.encode(payload), { msgID: payload, timeout: attemptTimeoutMs });
          this.acks.push({ payload, seq: ack.seq, duplicate: ack.duplicate, atMs: Date.now() });
          if (this.o.paceMs) await sleep(this.o.paceMs);
          break;
        } catch (err) {
          const e = err as { code?: string; message?: string };
          if (e.code === 'TIMEOUT' || /timeout/i.test(e.message ?? '')) this.failures.timeouts++;
          else if (e.code === '503' || /no responders/i.test(e.message ?? '')) {
            this.failures.noResponders++;
            await sleep(retryPauseMs);
          } else {
            // Anything else (a 10008-type API error, a closed connection) is kept for the report and retried.
            if (this.failures.other.length < 50) this.failures.other.push(`${e.code ?? ''} ${e.message ?? String(err)}`);
            await sleep(retryPauseMs);
          }
          if (Date.now() - firstAttemptMs > maxRetryMs) {
            this.giveUpError = new Error(`gave up on ${payload} after ${maxRetryMs} ms: ${JSON.stringify(this.failures)}`);
            return;
          }
        }
      }
    }
  }
}

/**
 * Checks a stream's content against the acknowledgements: every acked payload is at the sequence its ack
 * named, no payload appears twice, and nothing appears that was never published. Returns the problems.
 */
export function ackProblems(acks: readonly AckRecord[], content: ReadonlyMap<number, string>, attempted: readonly string[]): string[] {
  const problems: string[] = [];
  for (const a of acks) {
    const got = content.get(a.seq);
    if (got !== a.payload) problems.push(`acked ${a.payload} at seq ${a.seq}, stream has ${got ?? 'nothing'}`);
  }
  const seen = new Map<string, number>();
  const known = new Set(attempted);
  for (const [seq, payload] of content) {
    const earlier = seen.get(payload);
    if (earlier !== undefined) problems.push(`${payload} duplicated at seqs ${earlier} and ${seq}`);
    seen.set(payload, seq);
    if (!known.has(payload)) problems.push(`seq ${seq} holds ${payload}, never published`);
  }
  return problems.slice(0, 20);
}

/** One replica's content and state as read through it as leader. */
export interface ReplicaRead {
  content: ReadonlyMap<number, string>;
  state: { messages: number; first_seq: number; last_seq: number; bytes: number };
}

/**
 * Every problem across replicas: acknowledgement problems per replica, then every sequence where a replica
 * differs from the first one named, and state differences. Empty when all replicas are identical and hold
 * every acknowledged message.
 */
export function replicaProblems(
  replicas: ReadonlyMap<string, ReplicaRead>,
  publisher: { acks: readonly AckRecord[]; attempted: readonly string[] },
  maxPerReplica = 5,
): string[] {
  const problems: string[] = [];
  const [refName, ref] = [...replicas][0]!;
  for (const [name, r] of replicas) {
    for (const p of ackProblems(publisher.acks, r.content, publisher.attempted).slice(0, maxPerReplica)) problems.push(`${name}: ${p}`);
    if (name === refName) continue;
    const s = r.state;
    const rs = ref.state;
    if (s.messages !== rs.messages || s.first_seq !== rs.first_seq || s.last_seq !== rs.last_seq || s.bytes !== rs.bytes) {
      problems.push(`${name} state ${JSON.stringify(pick(s))} != ${refName} ${JSON.stringify(pick(rs))}`);
    }
    const diffs: string[] = [];
    const seqs = new Set([...r.content.keys(), ...ref.content.keys()]);
    for (const seq of [...seqs].sort((a, b) => a - b)) {
      if (r.content.get(seq) !== ref.content.get(seq)) diffs.push(`seq ${seq}: ${name} ${r.content.get(seq) ?? '-'} / ${refName} ${ref.content.get(seq) ?? '-'}`);
    }
    if (diffs.length > 0) problems.push(`${name} differs from ${refName} at ${diffs.length} seqs, first: ${diffs.slice(0, maxPerReplica).join('; ')}`);
  }
  return problems;
}

function pick(s: ReplicaRead['state']): ReplicaRead['state'] {
  return { messages: s.messages, first_seq: s.first_seq, last_seq: s.last_seq, bytes: s.bytes };
}

/**
 * One acknowledged publish with a Nats-Msg-Id, retried on a timeout or 503 (a leader just elected, or its
 * interest not yet at this node) until `deadlineMs` from now.
 */
export async function publishRetrying(js: JetStreamClient, subject: string, payload: string, msgID: string, deadlineMs = 10_000): Promise<number> {
  const deadline = Date.now() + deadlineMs;
  for (;;) {
    try {
      return (await js.publish(subject, enc.encode(payload), { msgID, timeout: 1000 })).seq;
    } catch (err) {
      const e = err as { code?: string };
      const retryable = e.code === '503' || e.code === 'TIMEOUT';
      if (!retryable || Date.now() > deadline) throw err;
      await sleep(50);
    }
  }
}
