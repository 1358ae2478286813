// Fast batch publish (2.14 `allow_batched`, ADR-50's fast ingest; nats-server 2.14.5 processJetStreamFastBatchMsg
// and jetstream_batching.go's fastBatch). The batch is carried by the reply subject,
// `<prefix>.<batch id>.<initial flow>.<gap mode>.<batch seq>.<op>.$FI` (op 0 start, 1 append, 2 commit, 3 commit
// by end-of-batch, 4 ping). Every message is stored as it comes (no staging: unlike an atomic batch nothing
// waits for the commit); the leader answers with flow acks `{"type":"ack","seq":S,"msgs":N}` once the batch's
// messages up to S are durable (every N messages, N ramping between 1 and 500 with the number of batches in
// flight), `{"type":"gap",...}` when a sequence is missing, `{"type":"err",...}` for a refused message, and a
// PubAck with `batch`/`count` once the commit's message is durable. With gap mode `fail`, a gap or an error
// ends the batch: it commits what was stored before it.
//
// This file holds the state machine only; the writer (local/ or cluster/) stores what `offer` hands it and
// reports each message's durability (`stored`), in batch order.
import type { ApiError } from '../api/api-error.js';
import { JsErrors } from '../api/api-errors.js';
import { BATCH_TIMEOUT_MS, withoutHeader } from './atomic-batch.js';
import type { PubAckEncoder } from './pub-ack.js';
import { decidePublish, type PublishRulesView } from './publish-rules.js';
import { requiredApiLevelError } from './unsupported-headers.js';
import { InflightBatches, type InflightTotal } from './inflight-batches.js';

/** 2.14's defaults (streamDefaultMaxFastBatchInflightPerStream / Total). */
export const MAX_FAST_INFLIGHT_PER_STREAM = 1000;
export const MAX_FAST_INFLIGHT_TOTAL = 50_000;
/** The largest flow-ack interval the server grants (fastBatchInit, checkFlowControl). */
const MAX_ACK_MESSAGES = 500;
const MAX_BATCH_ID_LEN = 64;
export const FAST_BATCH_SUFFIX = '.$FI';

const enum Op {
  Start = 0,
  Append = 1,
  Commit = 2,
  CommitEob = 3,
  Ping = 4,
}

/** One message's batch coordinates, parsed from its reply subject. */
export interface FastBatchRef {
  id: string;
  seq: number;
  /** The client's largest flow-ack interval. */
  flow: number;
  gapOk: boolean;
  commit: boolean;
  commitEob: boolean;
  ping: boolean;
}

/** Fast batches in flight on this server, every stream together (globalInflightFastBatches). */
const inflightTotal: InflightTotal = { count: 0 };

/**
 * 2.14's getFastBatch: null when `reply` is no fast batch reply, 'invalid' when it ends in `.$FI` but does not
 * parse (answered "batch publish pattern is invalid").
 */
export function parseFastBatchReply(reply: string | null): FastBatchRef | 'invalid' | null {
  if (reply === null || reply.length <= 4 || !reply.endsWith(FAST_BATCH_SUFFIX)) return null;
  const parts = reply.slice(0, -4).split('.');
  // prefix (at least one token), id, flow, gap, seq, op
  if (parts.length < 6) return 'invalid';
  const n = parts.length;
  const op = goInt(parts[n - 1]!);
  if (op < Op.Start || op > Op.Ping) return 'invalid';
  const seqText = parts[n - 2]!;
  if (!/^[0-9]+$/.test(seqText)) return 'invalid';
  const seq = Number(seqText);
  if (seq === 0 || !Number.isSafeInteger(seq)) return 'invalid';
  const commitEob = op === Op.CommitEob;
  if (seq === 1 && commitEob) return 'invalid';
  if ((op === Op.Start && seq !== 1) || (op === Op.Append && seq <= 1)) return 'invalid';
  const gap = parts[n - 3]!;
  if (gap !== 'fail' && gap !== 'ok') return 'invalid';
  let flow = goInt(parts[n - 4]!);
  if (flow <= 0) flow = 10;
  else if (flow > 0xffff) flow = 0xffff;
  return { id: parts[n - 5]!, seq, flow, gapOk: gap === 'ok', commit: commitEob || op === Op.Commit, commitEob, ping: op === Op.Ping };
}

/** nats-server's parseInt64: digits only, else -1. */
function goInt(text: string): number {
  return /^[0-9]{1,15}$/.test(text) ? Number(text) : -1;
}

interface FastBatch {
  /** Highest batch sequence received. */
  lseq: number;
  /** Highest batch sequence durable (≤ lseq). */
  pseq: number;
  /** Batch sequence of the last flow ack (≤ pseq). */
  fseq: number;
  /** Stream sequence of the last durable message. */
  sseq: number;
  /** Messages handed to the writer and not yet durable. */
  pending: number;
  ackMessages: number;
  maxAckMessages: number;
  reply: string;
  gapOk: boolean;
  commit: boolean;
}

/** What `offer` decided: answered already (`done`), or store this message and report it with `stored`. */
export type FastStep =
  | { kind: 'done' }
  | {
      kind: 'store';
      ref: FastBatchRef;
      header: Buffer | null;
      msgId: string | undefined;
      rollup: 'sub' | 'all' | undefined;
      /** Interest retention with nobody interested: use up the sequence, store nothing. */
      noInterest: boolean;
    };

/** Where the batch's replies go (the writer's bus). */
export type FastBatchSend = (reply: string, body: Buffer) => void;

const DONE: FastStep = { kind: 'done' };

/** One stream's fast batches, on its leader. */
export class FastBatches {
  private readonly batches: InflightBatches<FastBatch>;

  constructor(
    private readonly acks: PubAckEncoder,
    private readonly send: FastBatchSend,
    timeoutMs = BATCH_TIMEOUT_MS,
  ) {
    this.batches = new InflightBatches(inflightTotal, timeoutMs);
  }

  get inflight(): number {
    return this.batches.size;
  }

  /** A message whose reply ends in `.$FI` (`ref` from parseFastBatchReply), in 2.14's order of checks. */
  offer(view: PublishRulesView, subject: string, reply: string, header: Buffer | null, data: Buffer, ref: FastBatchRef | 'invalid'): FastStep {
    const cfg = view.config;
    const noAck = cfg.no_ack === true;
    const respondError = (e: ApiError): FastStep => {
      if (!noAck) this.send(reply, this.acks.error(e));
      return DONE;
    };
    const hlen = header?.length ?? 0;
    if (view.sealed) return respondError(JsErrors.streamSealed());
    if (view.storageExceeded()) return respondError(JsErrors.insufficientResources());
    if (view.accountLimitExceeded?.(subject, hlen, data.length) === true) return respondError(JsErrors.accountResourcesExceeded());
    if (cfg.max_msg_size > 0 && hlen + data.length > cfg.max_msg_size) return respondError(JsErrors.messageSizeExceeds());
    if (cfg.allow_batched !== true) return respondError(JsErrors.batchPublishDisabled());
    if (ref === 'invalid') return respondError(JsErrors.batchPublishInvalidPattern());
    if (Buffer.byteLength(ref.id) > MAX_BATCH_ID_LEN) return respondError(JsErrors.batchPublishInvalidBatchId());
    let b = this.batches.get(ref.id);
    if (b === undefined) {
      if (ref.seq !== 1) return respondError(JsErrors.batchPublishUnknownBatchId());
      if (this.batches.size + 1 > MAX_FAST_INFLIGHT_PER_STREAM || inflightTotal.count + 1 > MAX_FAST_INFLIGHT_TOTAL) {
        return respondError(JsErrors.batchPublishTooManyInflight());
      }
      b = this.create(ref);
    }
    if (header !== null && header.indexOf('Nats-Required-Api-Level') >= 0) {
      const err = requiredApiLevelError(header);
      if (err !== null) {
        this.drop(ref.id);
        return respondError(err);
      }
      header = withoutHeader(header, 'Nats-Required-Api-Level'); // 2.14 checks it and never stores it
    }
    if (!b.commit) this.batches.touch(ref.id);

    if (ref.ping) {
      let flow = true;
      if (ref.seq > b.lseq) {
        this.sendJson(reply, { type: 'gap', last_seq: b.lseq + 1, seq: ref.seq + 1 });
        if (b.gapOk) {
          b.lseq = ref.seq;
          if (b.pending === 0) b.pseq = b.lseq;
          flow = !this.checkFlowControl(b, reply);
        } else if (this.commit(b, ref.id, reply)) {
          flow = false;
        }
      }
      if (flow) this.flowAck(b, b.fseq, reply);
      return DONE;
    }
    // Committing (after an error or gap): later messages are ignored, the client waits for the PubAck.
    if (b.commit) return DONE;

    b.lseq++;
    if (b.lseq !== ref.seq) {
      if (ref.seq > b.lseq) this.sendJson(reply, { type: 'gap', last_seq: b.lseq, seq: ref.seq });
      if (b.gapOk && ref.seq > b.lseq) {
        b.lseq = ref.seq;
      } else {
        b.lseq--; // a backward gap, or gap mode fail: the batch ends with what it has
        this.commit(b, ref.id, reply);
        return DONE;
      }
    }
    if (ref.commit) {
      if (ref.commitEob) {
        b.lseq--;
        if (b.pending === 0) b.pseq = b.lseq;
      }
      // With eob everything may be durable already (the PubAck goes now); else the commit message's
      // durability sends it.
      this.commit(b, ref.id, reply);
      if (ref.commitEob) return DONE;
    }
    // The first message answers with the flow interval granted (unless it commits at once).
    if (ref.seq === 1 && !ref.commit && !noAck) this.flowAck(b, 0, reply);

    const ruling = decidePublish(view, subject, header, data.length);
    // A counter increment needs running totals across the batch's messages in flight (2.14 keeps them);
    // not implemented for fast batches, so the header is refused by name rather than stored unsummed.
    if (ruling.kind === 'load' || (ruling.kind === 'store' && ruling.counter !== undefined)) {
      return this.refused(b, ref, reply, noAck, JsErrors.atomicPublishUnsupportedHeader('Nats-Incr'), 0);
    }
    switch (ruling.kind) {
      case 'store':
      case 'skip':
        b.pending++;
        return {
          kind: 'store',
          ref,
          header: ruling.kind === 'store' && ruling.header !== undefined ? ruling.header : header,
          msgId: ruling.msgId,
          rollup: ruling.kind === 'store' ? ruling.rollup : undefined,
          noInterest: ruling.kind === 'skip',
        };
      case 'duplicate':
        return this.refused(b, ref, reply, noAck, null, ruling.seq);
      case 'drop':
        return DONE;
      case 'reject':
        return this.refused(b, ref, reply, noAck, ruling.error, 0);
    }
  }

  /**
   * The writer made `ref`'s message durable at stream sequence `streamSeq` (fastBatchRegisterSequences): a flow
   * ack when the interval is reached, the PubAck when it completes a commit.
   */
  stored(ref: FastBatchRef, reply: string, streamSeq: number): void {
    const b = this.batches.get(ref.id);
    if (b === undefined) return;
    b.reply = reply;
    if (b.pending > 0) b.pending--;
    b.sseq = streamSeq;
    // None pending: duplicates may have been skipped, so everything received is durable.
    b.pseq = b.pending === 0 ? b.lseq : ref.seq;
    if (b.lseq === b.pseq && b.commit) {
      this.drop(ref.id);
      this.send(reply, this.acks.batch(b.sseq, ref.id, b.lseq));
      return;
    }
    this.checkFlowControl(b, reply);
  }

  /** The writer could not store `ref`'s message: reported like a refused message. */
  failed(ref: FastBatchRef, reply: string, error: ApiError): void {
    const b = this.batches.get(ref.id);
    if (b === undefined) return;
    if (b.pending > 0) b.pending--;
    this.sendJson(reply, { type: 'err', seq: ref.seq, error: error.toJSON() });
    if (b.gapOk && !ref.commit) return;
    b.lseq = Math.max(b.pseq, ref.seq - 1);
    if (b.pending === 0) b.pseq = b.lseq;
    this.commit(b, ref.id, reply);
  }

  /** Leadership lost, the stream stopped or allow_batched turned off: every batch is gone. */
  clear(): void {
    this.batches.clear();
  }

  /** A message the rules refused (`error`) or found a duplicate of (`dupSeq`). */
  private refused(b: FastBatch, ref: FastBatchRef, reply: string, noAck: boolean, error: ApiError | null, dupSeq: number): FastStep {
    const dup = error === null;
    if (dup) {
      if (b.pending === 0) {
        b.pseq = ref.seq;
        this.checkFlowControl(b, reply);
      }
      if (!ref.commit) return DONE;
    }
    if (!b.gapOk && b.lseq === 1) {
      // The batch's very first message: answered as an ordinary publish would be.
      this.drop(ref.id);
      if (dup) this.send(reply, this.acks.batchDuplicate(dupSeq, ref.id, ref.seq));
      else if (!noAck) this.send(reply, this.acks.error(error));
      return DONE;
    }
    if (!dup) this.sendJson(reply, { type: 'err', seq: ref.seq, error: error.toJSON() });
    if (b.gapOk && !ref.commit) return DONE;
    if (!dup) {
      b.lseq--;
      if (b.pending === 0) b.pseq = b.lseq;
    }
    this.commit(b, ref.id, reply);
    return DONE;
  }

  private create(ref: FastBatchRef): FastBatch {
    const b: FastBatch = {
      lseq: 0,
      pseq: 0,
      fseq: 0,
      sseq: 0,
      pending: 0,
      ackMessages: 1,
      maxAckMessages: ref.flow,
      reply: '',
      gapOk: ref.gapOk,
      commit: false,
    };
    this.batches.add(ref.id, b);
    // The only batch gets what the client asks (up to 500); with others in flight it starts at 1 and ramps.
    b.ackMessages = this.batches.size > 1 ? 1 : Math.min(MAX_ACK_MESSAGES, b.maxAckMessages);
    return b;
  }

  /** Ends the batch (fastBatchCommit); true when it is all durable and the PubAck went out now. */
  private commit(b: FastBatch, id: string, reply: string): boolean {
    b.commit = true;
    this.batches.hold(id);
    if (b.lseq !== b.pseq) return false;
    this.drop(id);
    this.send(reply, this.acks.batch(b.sseq, id, b.lseq));
    return true;
  }

  /** 2.14's checkFlowControl: a flow ack per `ackMessages` durable messages, the interval adapted. */
  private checkFlowControl(b: FastBatch, reply: string): boolean {
    const am = b.ackMessages;
    if (b.pseq < b.fseq + am) return false;
    b.fseq += Math.floor((b.pseq - b.fseq) / am) * am; // only the last of several due acks
    const max = Math.min(Math.max(1, Math.floor(MAX_ACK_MESSAGES / this.batches.size)), b.maxAckMessages);
    if (b.ackMessages < max) b.ackMessages = Math.min(b.ackMessages * 2, max);
    else if (b.ackMessages > max) b.ackMessages = Math.max(Math.floor(b.ackMessages / 2), max);
    this.flowAck(b, b.fseq, reply);
    return true;
  }

  private flowAck(b: FastBatch, seq: number, reply: string): void {
    if (reply !== '') this.sendJson(reply, { type: 'ack', seq, msgs: b.ackMessages });
  }

  private sendJson(reply: string, body: object): void {
    this.send(reply, Buffer.from(JSON.stringify(body)));
  }

  private drop(id: string): void {
    this.batches.drop(id);
  }
}
