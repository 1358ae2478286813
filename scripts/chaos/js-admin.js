// The JetStream API requests the chaos run needs, over one admin connection: create streams and consumers,
// read stream/consumer info (answered by the leader only), step leaders down, read a message by sequence,
// find the meta leader (monitor /jsz), and drive the Flotilla fault hook.
import { sleep } from './sleep.js';

const enc = new TextEncoder();
const dec = new TextDecoder();

export class ApiError extends Error {
  constructor(code, errCode, description) {
    super(`${code}/${errCode} ${description}`);
    this.code = code;
    this.errCode = errCode;
  }
}

export class JsAdmin {
  constructor(nc, { requestTimeoutMs = 2_000 } = {}) {
    this.nc = nc;
    this.requestTimeoutMs = requestTimeoutMs;
  }

  /** One API request; throws ApiError for an `error` answer and the client's error for timeouts / 503. */
  async api(subject, body, timeoutMs = this.requestTimeoutMs) {
    const payload = body === undefined ? new Uint8Array(0) : enc.encode(JSON.stringify(body));
    const m = await this.nc.request(subject, payload, { timeout: timeoutMs });
    const answer = JSON.parse(dec.decode(m.data));
    if (answer.error) throw new ApiError(answer.error.code, answer.error.err_code, answer.error.description);
    return answer;
  }

  /** Retries `fn` on any error until it succeeds or `timeoutMs` passes (cluster forming, elections). */
  async retrying(what, fn, timeoutMs = 30_000, pauseMs = 250) {
    const deadline = Date.now() + timeoutMs;
    let lastErr = null;
    while (Date.now() < deadline) {
      try {
        return await fn();
      } catch (err) {
        lastErr = err;
        await sleep(pauseMs);
      }
    }
    throw new Error(`${what} did not succeed in ${timeoutMs} ms: ${lastErr?.message ?? 'timeout'}`);
  }

  streamInfo(stream, timeoutMs) {
    return this.api(`$JS.API.STREAM.INFO.${stream}`, undefined, timeoutMs);
  }

  async createStream(config) {
    try {
      await this.api(`$JS.API.STREAM.DELETE.${config.name}`, undefined);
    } catch (err) {
      if (!(err instanceof ApiError)) throw err; // 10059 stream not found is the usual answer
    }
    return this.api(`$JS.API.STREAM.CREATE.${config.name}`, config, 10_000);
  }

  createConsumer(stream, config) {
    return this.api(`$JS.API.CONSUMER.DURABLE.CREATE.${stream}.${config.durable_name}`, { stream_name: stream, config }, 10_000);
  }

  consumerInfo(stream, consumer, timeoutMs) {
    return this.api(`$JS.API.CONSUMER.INFO.${stream}.${consumer}`, undefined, timeoutMs);
  }

  /** Asks for `preferred` as the next leader (newer servers honour it; 2.9 picks one itself). */
  async stepDownStream(stream, preferred) {
    const subject = `$JS.API.STREAM.LEADER.STEPDOWN.${stream}`;
    if (preferred && !this.preferredRefused) {
      try {
        return await this.api(subject, { placement: { preferred } });
      } catch (err) {
        // 2.9 insists on an empty body (400/10003): remember and send none from now on
        if (!(err instanceof ApiError && err.code === 400)) throw err;
        this.preferredRefused = true;
      }
    }
    return this.api(subject, undefined);
  }

  stepDownConsumer(stream, consumer) {
    return this.api(`$JS.API.CONSUMER.LEADER.STEPDOWN.${stream}.${consumer}`, undefined);
  }

  /** The stored message at `seq` ({seq, subject, data: Uint8Array, headers}) or null when there is none. */
  async getMessage(stream, seq, timeoutMs) {
    try {
      const answer = await this.api(`$JS.API.STREAM.MSG.GET.${stream}`, { seq }, timeoutMs);
      const m = answer.message;
      return { seq: m.seq, subject: m.subject, data: m.data ? Buffer.from(m.data, 'base64') : Buffer.alloc(0) };
    } catch (err) {
      if (err instanceof ApiError && err.errCode === 10037) return null; // no message found (deleted)
      throw err;
    }
  }

  /** The stream's current leader name, or null when the stream has none (or did not answer). */
  async streamLeader(stream, timeoutMs = 1_000) {
    try {
      const info = await this.streamInfo(stream, timeoutMs);
      return info.cluster?.leader ?? null;
    } catch {
      return null;
    }
  }

  /** Sends a fault-hook command to one Flotilla node over a connection to that node. */
  static async fault(nodeConnection, name, command) {
    const m = await nodeConnection.request(`$FLOTILLA.FAULT.${name}`, enc.encode(JSON.stringify(command)), { timeout: 2_000 });
    const answer = JSON.parse(dec.decode(m.data));
    if (!answer.ok) throw new Error(`fault hook on ${name}: ${answer.error}`);
    if (answer.server !== name) throw new Error(`fault hook answered by ${answer.server}, not ${name}`);
    return answer;
  }
}

/** The meta leader as some live node's monitor /jsz reports it (null when none answers with a leader). */
export async function metaLeaderFromMonitor(nodes, isUp) {
  for (const n of nodes) {
    if (!n.monitorUrl || !isUp(n.name)) continue;
    try {
      const res = await fetch(`${n.monitorUrl}/jsz`, { signal: AbortSignal.timeout(1_000) });
      if (!res.ok) continue;
      const jsz = await res.json();
      const leader = jsz.meta_cluster?.leader;
      if (leader) return leader;
    } catch {
      // paused or down: ask the next node
    }
  }
  return null;
}

