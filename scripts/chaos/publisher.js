// One publisher: sends ids `<stream>.p<index>.<k>` one at a time with Nats-Msg-Id = id, retrying each id
// until it is acknowledged (so every retry is the same message to the stream's de-duplication), and records
// every acknowledgement: id -> seq and when it arrived.
import { headers } from 'nats';
import { sleep } from './sleep.js';

const enc = new TextEncoder();
const dec = new TextDecoder();
const RETRY_PAUSE_MS = 50;
const MAX_LATENCY_SAMPLES = 200_000;

export class Publisher {
  /**
   * @param record shared per-stream record: { acks: Map<id, seq>, ackTimesMs: number[], violations: [] }
   */
  constructor({ nc, stream, subject, index, payloadBytes, ratePerSec, pubTimeoutMs, record, startMs }) {
    Object.assign(this, { nc, stream, subject, index, payloadBytes, ratePerSec, pubTimeoutMs, record, startMs });
    this.sent = 0; // ids acknowledged
    this.attempts = 0;
    this.errors = new Map(); // error code -> count
    this.lastSeq = 0;
    this.latenciesMs = []; // of acknowledged attempts, first MAX_LATENCY_SAMPLES kept
    this.stopping = false; // finish the id in flight, then stop
    this.abortAtMs = Infinity; // give up the id in flight after this time
  }

  idOf(k) {
    return `${this.stream}.p${this.index}.${k}`;
  }

  payloadOf(id) {
    const text = `${id} `;
    return enc.encode(text.length >= this.payloadBytes ? text : text.padEnd(this.payloadBytes, 'x'));
  }

  async run() {
    const minGapMs = this.ratePerSec > 0 ? 1000 / this.ratePerSec : 0;
    // Bounded by stop(): the loop ends once stopping is set and the id in flight is acknowledged or abandoned.
    for (let k = 0; !this.stopping; k++) {
      const began = Date.now();
      if (!(await this.publishUntilAcked(this.idOf(k)))) return;
      const spare = minGapMs - (Date.now() - began);
      if (spare > 0) await sleep(spare);
    }
  }

  /** true once acknowledged; false when abandoned at abortAtMs */
  async publishUntilAcked(id) {
    const h = headers();
    h.set('Nats-Msg-Id', id);
    const payload = this.payloadOf(id);
    while (Date.now() < this.abortAtMs) {
      this.attempts++;
      const sentAt = Date.now();
      try {
        const m = await this.nc.request(this.subject, payload, { timeout: this.pubTimeoutMs, headers: h });
        const ack = JSON.parse(dec.decode(m.data));
        if (ack.error) {
          this.countError(`api-${ack.error.err_code ?? ack.error.code}`);
          await sleep(RETRY_PAUSE_MS);
          continue;
        }
        if (this.latenciesMs.length < MAX_LATENCY_SAMPLES) this.latenciesMs.push(Date.now() - sentAt);
        this.recordAck(id, ack);
        return true;
      } catch (err) {
        this.countError(String(err.code ?? err.message));
        // 503 no responders answers at once during an election: do not spin
        await sleep(err.code === 'TIMEOUT' ? 0 : RETRY_PAUSE_MS);
      }
    }
    return false;
  }

  recordAck(id, ack) {
    const r = this.record;
    const seq = ack.seq;
    const earlier = r.acks.get(id);
    if (earlier !== undefined && earlier !== seq) {
      r.violations.push({ type: 'ack-seq-changed', stream: this.stream, id, seqs: [earlier, seq] });
    }
    if (ack.stream !== this.stream) r.violations.push({ type: 'ack-wrong-stream', stream: this.stream, id, ack });
    if (seq <= this.lastSeq) {
      r.violations.push({ type: 'ack-order', stream: this.stream, id, seq, previousSeq: this.lastSeq });
    }
    this.lastSeq = Math.max(this.lastSeq, seq);
    r.acks.set(id, seq);
    r.ackTimesMs.push(Date.now() - this.startMs);
    if (ack.duplicate) r.duplicateAcks++;
    this.sent++;
  }

  countError(code) {
    this.errors.set(code, (this.errors.get(code) ?? 0) + 1);
  }
}
