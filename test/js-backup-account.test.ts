// `flotilla-backup backup` / `restore` (bin/flotilla-backup.js) of a whole account on real processes: a stream
// with a durable consumer part-way through, a KV bucket and an object store are saved from one server and
// restored into an empty one; every message (sequence and payload), every KV value, the object's bytes and the
// consumer's delivered / ack floor are equal. E2E_SERVER=nats-server runs both servers as nats-server.
import { afterAll, expect, it } from 'vitest';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { AckPolicy, connect, type NatsConnection } from 'nats';
import { startFlotilla, type FlotillaProcess } from './helpers/flotilla-process.js';
import { readStream } from './helpers/js-cluster.js';

const BIN = fileURLToPath(new URL('../bin/flotilla-backup.js', import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'flotilla-backup-account-'));
const servers: FlotillaProcess[] = [];
const conns: NatsConnection[] = [];
afterAll(async () => {
  for (const nc of conns) await nc.close().catch(() => undefined);
  for (const s of servers) await s.stop();
  rmSync(dir, { recursive: true, force: true });
});

async function server(name: string): Promise<NatsConnection> {
  const s = await startFlotilla({ args: ['-js', '-sd', join(dir, name)] });
  servers.push(s);
  const nc = await connect({ servers: s.url });
  conns.push(nc);
  return nc;
}

function tool(args: string[]): { status: number | null; stdout: string; stderr: string } {
  const r = spawnSync(process.execPath, [BIN, ...args], { encoding: 'utf8', timeout: 120_000 });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

it('backs up every stream, KV bucket and object store of the account and restores them equal', async () => {
  const src = await server('source');
  const jsm = await src.jetstreamManager();
  const js = src.jetstream();
  await jsm.streams.add({ name: 'ORDERS', subjects: ['orders.>'] });
  for (let i = 0; i < 300; i++) await js.publish(`orders.${i % 7}`, new TextEncoder().encode(`order-${i}`));
  await jsm.streams.deleteMessage('ORDERS', 10);
  await jsm.consumers.add('ORDERS', { durable_name: 'billing', ack_policy: AckPolicy.Explicit });
  const consumer = await js.consumers.get('ORDERS', 'billing');
  const batch = await consumer.fetch({ max_messages: 40, expires: 5000 });
  for await (const m of batch) m.ack();
  await src.flush();
  const kv = await js.views.kv('settings');
  for (let i = 0; i < 25; i++) await kv.put(`k${i}`, new TextEncoder().encode(`v${i}`));
  const os = await js.views.os('files');
  const blob = new Uint8Array(300_000).map((_, i) => (i * 31) % 251);
  await os.putBlob({ name: 'blob.bin' }, blob);

  const backupDir = join(dir, 'backup');
  const url = servers[0]!.url;
  const b = tool(['backup', '--dir', backupDir, '--server', url]);
  expect(b.status, b.stderr).toBe(0);
  expect(b.stdout).toMatch(/backed up 3 stream\(s\)/);
  expect(b.stdout).toMatch(/ORDERS\s+\[#{30}\] 100%/);

  const dst = await server('target');
  const r = tool(['restore', '--dir', backupDir, '--server', servers[1]!.url]);
  expect(r.status, r.stderr).toBe(0);
  expect(r.stdout).toMatch(/restored 3 stream\(s\)/);

  const djsm = await dst.jetstreamManager();
  const names = async (m: typeof jsm): Promise<string[]> => (await m.streams.names().next()).sort();
  expect(await names(djsm)).toEqual(await names(jsm));
  for (const name of await names(jsm)) {
    const [a, d] = [await jsm.streams.info(name), await djsm.streams.info(name)];
    expect(d.state, name).toMatchObject({ messages: a.state.messages, first_seq: a.state.first_seq, last_seq: a.state.last_seq });
    expect(d.state.num_deleted ?? 0, name).toBe(a.state.num_deleted ?? 0);
    expect(await readStream(djsm, name), name).toEqual(await readStream(jsm, name));
  }
  const [ca, cd] = [await jsm.consumers.info('ORDERS', 'billing'), await djsm.consumers.info('ORDERS', 'billing')];
  expect(cd.delivered.stream_seq).toBe(ca.delivered.stream_seq);
  expect(cd.ack_floor.stream_seq).toBe(ca.ack_floor.stream_seq);
  const dkv = await dst.jetstream().views.kv('settings');
  for (let i = 0; i < 25; i++) expect(new TextDecoder().decode((await dkv.get(`k${i}`))!.value)).toBe(`v${i}`);
  const dos = await dst.jetstream().views.os('files');
  expect(await dos.getBlob('blob.bin')).toEqual(blob);
}, 240_000);
