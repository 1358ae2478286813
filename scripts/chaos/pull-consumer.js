// A durable pull consumer with explicit acks driven by raw pull requests (so it behaves the same against
// any server): one pull at a time ({batch, expires}); every delivered message is recorded (id, stream
// seq, delivery count) and acknowledged. A pull ends on a status (408 expired, 409 leadership change ...),
// a full batch, or a client-side timer when the leader vanished without answering.
import { createInbox } from 'nats';
import { sleep } from './sleep.js';

const enc = new TextEncoder();
const dec = new TextDecoder();

/** {stream seq, delivery count} from a `$JS.ACK...` reply subject (2.9 layout and the newer one with domain/hash). */
export function ackSubjectInfo(reply) {
  const t = reply.split('.');
  if (t.length === 9) return { delivered: Number(t[4]), streamSeq: Number(t[5]) };
  if (t.length >= 11) return { delivered: Number(t[6]), streamSeq: Number(t[7]) };
  return null;
}

export class PullConsumer {
  constructor({ nc, stream, durable, batch = 100, expiresMs = 1_000, record }) {
    Object.assign(this, { nc, stream, durable, batch, expiresMs, record });
    this.stopping = false;
    this.pulls = 0;
    this.statuses = new Map(); // status code -> count
    this.inbox = createInbox();
    this.current = null; // { remaining, done() }
    this.sub = nc.subscribe(this.inbox, { callback: (err, m) => !err && this.onMessage(m) });
  }

  onMessage(m) {
    const code = m.headers?.code ?? 0;
    if (code > 0 && m.data.length === 0) {
      this.statuses.set(code, (this.statuses.get(code) ?? 0) + 1);
      this.current?.done();
      return;
    }
    if (!m.reply) return;
    const meta = ackSubjectInfo(m.reply);
    const id = dec.decode(m.data).split(' ', 1)[0];
    const r = this.record;
    r.deliveries++;
    if (meta && meta.delivered > 1) r.redeliveries++;
    const seen = r.received.get(id);
    if (seen === undefined) r.received.set(id, meta?.streamSeq ?? 0);
    else r.duplicateDeliveries++;
    if (meta) {
      // A first delivery of an earlier sequence than one already seen means order broke (or a leader
      // change replayed from its replicated state); counted, judged in the summary.
      if (meta.delivered === 1 && meta.streamSeq <= r.highestFirstDeliverySeq) r.outOfOrderFirstDeliveries++;
      if (meta.delivered === 1) r.highestFirstDeliverySeq = Math.max(r.highestFirstDeliverySeq, meta.streamSeq);
    }
    this.nc.publish(m.reply, enc.encode('+ACK'));
    if (this.current && --this.current.remaining <= 0) this.current.done();
  }

  async pullOnce() {
    this.pulls++;
    await new Promise((resolve) => {
      const timer = setTimeout(() => finish(), this.expiresMs + 1_000);
      const finish = () => {
        clearTimeout(timer);
        this.current = null;
        resolve();
      };
      this.current = { remaining: this.batch, done: finish };
      try {
        this.nc.publish(`$JS.API.CONSUMER.MSG.NEXT.${this.stream}.${this.durable}`, enc.encode(JSON.stringify({ batch: this.batch, expires: this.expiresMs * 1e6 })), { reply: this.inbox });
      } catch {
        finish(); // connection closed or reconnecting: the next pull tries again
      }
    });
  }

  /** Pulls until stop(); every iteration is bounded by the pull timer. */
  async run() {
    while (!this.stopping) {
      const began = Date.now();
      await this.pullOnce();
      // A pull that ended at once (no responders while leaderless) must not spin.
      if (Date.now() - began < 20) await sleep(50);
    }
  }

  close() {
    this.sub.unsubscribe();
  }
}
