// STREAM.SNAPSHOT / STREAM.RESTORE driven as the `nats` CLI (jsm.go SnapshotToDirectory,
// RestoreSnapshotFromDirectory) drives them, with raw requests through the stock `nats` client.
import { createInbox, type Msg, type NatsConnection } from 'nats';

const enc = new TextEncoder();
const dec = new TextDecoder();

export interface Snapshot {
  response: { config: { name: string }; state: { messages: number; last_seq: number } };
  chunks: Uint8Array[];
  end: Msg;
}

/** As jsm.go's SnapshotToDirectory: subscribe, request, ack each chunk with a reply, stop at the empty message. */
export async function snapshot(nc: NatsConnection, stream: string, opts: { chunk_size?: number; window_size?: number; jsck?: boolean } = {}, holdAcksMs = 0): Promise<Snapshot & { beforeAcks: number }> {
  const inbox = createInbox();
  const chunks: Uint8Array[] = [];
  const held: Msg[] = [];
  let holding = holdAcksMs > 0;
  let beforeAcks = 0;
  let done!: (m: Msg) => void;
  const ended = new Promise<Msg>((r) => (done = r));
  const sub = nc.subscribe(inbox, {
    callback: (_e, m) => {
      if (m.data.length === 0) return done(m);
      chunks.push(m.data);
      if (m.reply) {
        if (holding) held.push(m);
        else m.respond(new Uint8Array(0));
      }
    },
  });
  const res = await nc.request(`$JS.API.STREAM.SNAPSHOT.${stream}`, enc.encode(JSON.stringify({ deliver_subject: inbox, ...opts })), { timeout: 5000 });
  if (holding) {
    await new Promise((r) => setTimeout(r, holdAcksMs));
    beforeAcks = chunks.length;
    holding = false;
    for (const m of held) m.respond(new Uint8Array(0));
  }
  const end = await ended;
  sub.unsubscribe();
  return { response: JSON.parse(dec.decode(res.data)), chunks, end, beforeAcks };
}

/** As jsm.go's RestoreSnapshotFromDirectory: each chunk a request, then an empty request for the result. */
export async function restore(nc: NatsConnection, stream: string, body: object, chunks: Uint8Array[]): Promise<{ start: any; chunkReplies: string[]; result: any }> {
  const start = JSON.parse(dec.decode((await nc.request(`$JS.API.STREAM.RESTORE.${stream}`, enc.encode(JSON.stringify(body)), { timeout: 5000 })).data));
  const chunkReplies: string[] = [];
  if (start.error) return { start, chunkReplies, result: null };
  for (const c of chunks) {
    const r = await nc.request(start.deliver_subject, c, { timeout: 5000 });
    chunkReplies.push(dec.decode(r.data));
    if (r.data.length > 0) return { start, chunkReplies, result: JSON.parse(dec.decode(r.data)) };
  }
  const fin = await nc.request(start.deliver_subject, new Uint8Array(0), { timeout: 10000 });
  return { start, chunkReplies, result: JSON.parse(dec.decode(fin.data)) };
}

export async function rawGet(nc: NatsConnection, stream: string, seq: number): Promise<any> {
  return JSON.parse(dec.decode((await nc.request(`$JS.API.STREAM.MSG.GET.${stream}`, enc.encode(JSON.stringify({ seq })), { timeout: 3000 })).data));
}

