// Collects the replies to one DIRECT.GET request on an inbox: messages until a status reply (204 EOB or an
// error status), or, for a single get, the first reply.
import { createInbox, type NatsConnection } from '@nats-io/transport-node';

export interface DirectReply {
  /** 0 for a message; the status code otherwise. */
  code: number;
  description: string;
  headers: Record<string, string>;
  data: string;
}

const dec = new TextDecoder();

export async function directReplies(nc: NatsConnection, subject: string, body: string | object, opts: { single?: boolean; timeoutMs?: number } = {}): Promise<DirectReply[]> {
  const inbox = createInbox();
  const out: DirectReply[] = [];
  const sub = nc.subscribe(inbox, { timeout: opts.timeoutMs ?? 5000 });
  nc.publish(subject, typeof body === 'string' ? body : JSON.stringify(body), { reply: inbox });
  for await (const m of sub) {
    const headers: Record<string, string> = {};
    for (const k of m.headers?.keys() ?? []) headers[k] = m.headers!.get(k);
    const code = m.headers?.code ?? 0;
    out.push({ code, description: m.headers?.description ?? '', headers, data: dec.decode(m.data) });
    if (code !== 0 || opts.single === true) break;
  }
  sub.unsubscribe();
  return out;
}
