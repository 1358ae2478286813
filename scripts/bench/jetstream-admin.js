// The JetStream API calls a bench needs before it measures (streams, consumers, a KV bucket, who leads),
// as plain requests over the raw client so the same code drives Flotilla and nats-server.
import { RawNatsClient } from './raw-nats-client.js';

const API_TIMEOUT_MS = 10_000;
const NS_PER_MS = 1_000_000;
const SETTLE_TIMEOUT_MS = 20_000;
const TRANSIENT = /10005|10008|10023|temporarily unavailable|insufficient resources|no suitable peers|no responders|timed out|not current/i;

export class JetStreamAdmin {
  static async connect(url) {
    return new JetStreamAdmin(await RawNatsClient.connect(url, 'bench-admin'));
  }

  constructor(nc) {
    this.nc = nc;
    this.waiters = new Map(); // request id -> resolve
    this.nextId = 1;
    this.inbox = `${nc.inboxPrefix}.api`;
    nc.subscribe(`${this.inbox}.*`, (m) => {
      const id = m.subjectTailNumber();
      const resolve = this.waiters.get(id);
      if (!resolve) return;
      this.waiters.delete(id);
      resolve({ status: m.status(), text: m.payload().toString('utf8') });
    });
  }

  /** One request; resolves with {status, text}; status 503 = no responders, 408 = timed out here. */
  request(subject, body = '', timeoutMs = API_TIMEOUT_MS) {
    const id = this.nextId++;
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.waiters.delete(id);
        resolve({ status: 408, text: '' });
      }, timeoutMs);
      this.waiters.set(id, (r) => {
        clearTimeout(timer);
        resolve(r);
      });
      this.nc.publish(subject, `${this.inbox}.${id}`, Buffer.from(typeof body === 'string' ? body : JSON.stringify(body)));
    });
  }

  /** A JSON API call; throws with the server's error description. */
  async api(subject, body = '', timeoutMs = API_TIMEOUT_MS) {
    const r = await this.request(`$JS.API.${subject}`, body, timeoutMs);
    if (r.status === 503) throw new Error(`no responders for $JS.API.${subject}`);
    if (r.status === 408) throw new Error(`$JS.API.${subject} timed out after ${timeoutMs} ms`);
    const reply = JSON.parse(r.text);
    if (reply.error) throw new Error(`$JS.API.${subject}: ${reply.error.description ?? JSON.stringify(reply.error)} (${reply.error.err_code ?? reply.error.code})`);
    return reply;
  }

  /** Waits until `$JS.API.INFO` answers without an error (a cluster has elected its meta leader). */
  async waitReady(timeoutMs) {
    const deadline = Date.now() + timeoutMs;
    let last = '';
    while (Date.now() < deadline) {
      try {
        await this.api('INFO', '', 2_000);
        return;
      } catch (err) {
        last = err.message;
      }
      await sleep(200);
    }
    throw new Error(`JetStream not ready within ${timeoutMs} ms: ${last}`);
  }

  /**
   * An API call retried while the answer says the cluster is settling: "temporarily unavailable" (10008),
   * "insufficient resources" (10023), "no suitable peers" (10005) while peers join, no responders or no
   * answer. Any other error is final.
   */
  async apiRetrying(subject, body, timeoutMs = SETTLE_TIMEOUT_MS) {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      try {
        return await this.api(subject, body);
      } catch (err) {
        if (Date.now() > deadline || !TRANSIENT.test(err.message)) throw err;
      }
      await sleep(250);
    }
  }

  /** Deletes the stream if it exists and creates it afresh. */
  async freshStream(config) {
    await this.api(`STREAM.DELETE.${config.name}`).catch(() => undefined);
    return this.apiRetrying(`STREAM.CREATE.${config.name}`, config);
  }

  async streamInfo(name) {
    return this.api(`STREAM.INFO.${name}`);
  }

  /** The stream's leader (server name), waiting until the group has one. */
  async streamLeader(name, timeoutMs = 15_000) {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const info = await this.streamInfo(name).catch(() => null);
      const leader = info?.cluster?.leader;
      if (leader) return leader;
      if (Date.now() > deadline) throw new Error(`stream ${name} has no leader after ${timeoutMs} ms`);
      await sleep(200);
    }
  }

  /** Publishes to `subject` until a PubAck comes back: a new group's leader may not take publishes yet. */
  async waitPublishable(subject, timeoutMs = 15_000) {
    const deadline = Date.now() + timeoutMs;
    let last = '';
    while (Date.now() < deadline) {
      const r = await this.request(subject, 'warm-up', 2_000);
      if (r.status === 0 && !r.text.includes('"error"')) return;
      last = r.status !== 0 ? `status ${r.status}` : r.text;
      await sleep(100);
    }
    throw new Error(`no PubAck on ${subject} within ${timeoutMs} ms: ${last}`);
  }

  async durableConsumer(stream, config) {
    await this.api(`CONSUMER.DELETE.${stream}.${config.durable_name}`).catch(() => undefined);
    return this.apiRetrying(`CONSUMER.DURABLE.CREATE.${stream}.${config.durable_name}`, { stream_name: stream, config });
  }

  /** A KV bucket configured as the `nats` client creates one (history 1). */
  async freshKvBucket(bucket, replicas) {
    return this.freshStream({
      name: `KV_${bucket}`,
      subjects: [`$KV.${bucket}.>`],
      retention: 'limits',
      max_msgs_per_subject: 1,
      discard: 'new',
      storage: 'file',
      num_replicas: replicas,
      duplicate_window: 120_000 * NS_PER_MS,
      deny_delete: true,
      allow_rollup_hdrs: true,
      allow_direct: true,
    });
  }

  close() {
    return this.nc.close();
  }
}

export function sleep(ms) {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
