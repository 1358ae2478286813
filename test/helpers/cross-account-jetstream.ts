// Cross-account JetStream setup shared by the one-node and cluster tests (js-accounts-cross,
// js-cluster-accounts-cross): account A with JetStream exporting its API (`response_type: stream`), its
// acks, the given service subjects and `deliver.>`; account B without JetStream importing them, the API under
// `JS.A.API`. Plus the pull fetch with acks and the push delivery both files check from B.
import { StringCodec, type JetStreamClient, type NatsConnection, type Subscription } from 'nats';
import { sleep } from './flotilla-process.js';

const sc = StringCodec();

/** The `accounts {}` block: users a/a in A and b/b in B; `services` are the publish subjects A exports. */
export function crossAccountsBlock(services: readonly string[]): string {
  const exports = services.map((s) => `      { service: "${s}" }`).join('\n');
  const imports = services.map((s) => `      { service: { account: A, subject: "${s}" } }`).join('\n');
  return `accounts {
  A: {
    jetstream: enabled
    users: [ { user: a, password: a } ]
    exports: [
      { service: "$JS.API.>", response_type: stream }
      { service: "$JS.ACK.>" }
${exports}
      { stream: "deliver.>" }
    ]
  }
  B: {
    users: [ { user: b, password: b } ]
    imports: [
      { service: { account: A, subject: "$JS.API.>" }, to: "JS.A.API.>" }
      { service: { account: A, subject: "$JS.ACK.>" } }
${imports}
      { stream: { account: A, subject: "deliver.>" } }
    ]
  }
}`;
}

/** One fetch of `batch` from the durable, each message acked; `subject:data` of each. */
export async function fetchAcked(js: JetStreamClient, stream: string, durable: string, batch: number, expiresMs: number): Promise<string[]> {
  const got: string[] = [];
  for await (const m of js.fetch(stream, durable, { batch, expires: expiresMs })) {
    got.push(`${m.subject}:${sc.decode(m.data)}`);
    m.ack();
  }
  return got;
}

/** Subscribes `subject` (a push consumer's deliver subject), acking each message; `got` fills as they come. */
export function ackingSubscriber(nc: NatsConnection, subject: string): { got: string[]; sub: Subscription; until(count: number, timeoutMs: number): Promise<string[]> } {
  const got: string[] = [];
  const sub = nc.subscribe(subject, {
    callback: (_e, m) => {
      got.push(`${m.subject}:${sc.decode(m.data)}`);
      m.respond(sc.encode('+ACK'));
    },
  });
  return {
    got,
    sub,
    async until(count, timeoutMs) {
      for (const deadline = Date.now() + timeoutMs; got.length < count && Date.now() < deadline; ) await sleep(20);
      return got;
    },
  };
}
