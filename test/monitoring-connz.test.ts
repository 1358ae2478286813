// /connz as nats-server 2.14 serves it (monitor.go Connz, monitor_sort_opts.go), through the stock `nats`
// client: every sort option's order (cid, uptime and reason ascending, the rest descending), the refusals with nats-server's
// texts (unknown sort, stop/reason on open connections, bad state, bad ints), `subs=detail`, `state=all`,
// and `rtt` once the server's PING was answered (ping_interval 1s from a config file). Runs against
// nats-server 2.9.10 too (E2E_SERVER=nats-server).
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect, type NatsConnection } from 'nats';
import { startFlotilla, type FlotillaProcess } from './helpers/flotilla-process.js';
import { until } from './helpers/until.js';
import { AGAINST_NATS_SERVER } from './helpers/js-cluster.js';

let server: FlotillaProcess;
const dir = mkdtempSync(join(tmpdir(), 'flotilla-connz-'));
const conns: NatsConnection[] = [];

const get = async (path: string): Promise<{ status: number; text: string; body: any }> => {
  const res = await fetch(`http://127.0.0.1:${server.httpPort}${path}`);
  const text = await res.text();
  let body: unknown = null;
  try {
    body = JSON.parse(text);
  } catch {
    // refusals are plain text
  }
  return { status: res.status, text, body };
};

beforeAll(async () => {
  const conf = join(dir, 'connz.conf');
  writeFileSync(conf, 'ping_interval: "1s"\n');
  server = await startFlotilla({ args: ['-c', conf] });
  // Three clients with 1, 5 and 3 published messages and 0, 2, 1 subscriptions.
  for (const [i, pubs, subs] of [
    [0, 1, 0],
    [1, 5, 2],
    [2, 3, 1],
  ] as const) {
    const nc = await connect({ servers: server.url, name: `c${i}` });
    for (let s = 0; s < subs; s++) nc.subscribe(`connz.${i}.${s}`, { queue: s === 0 ? 'workers' : undefined, max: s === 1 ? 7 : undefined });
    for (let p = 0; p < pubs; p++) nc.publish(`elsewhere.${i}`, 'x'.repeat(10 * (p + 1)));
    await nc.flush();
    conns.push(nc);
  }
});
afterAll(async () => {
  for (const nc of conns) await nc.close().catch(() => undefined);
  await server.stop();
  rmSync(dir, { recursive: true, force: true });
});

const names = (body: any): string[] => (body.connections as Array<{ name: string }>).map((c) => c.name);

describe('/connz sort', () => {
  it('orders by every option as nats-server: cid and uptime ascending, the others descending', async () => {
    expect(names((await get('/connz')).body)).toEqual(['c0', 'c1', 'c2']);
    expect(names((await get('/connz?sort=cid')).body)).toEqual(['c0', 'c1', 'c2']);
    expect(names((await get('/connz?sort=start')).body)).toEqual(['c0', 'c1', 'c2']);
    expect(names((await get('/connz?sort=msgs_from')).body)).toEqual(['c1', 'c2', 'c0']);
    expect(names((await get('/connz?sort=bytes_from')).body)).toEqual(['c1', 'c2', 'c0']);
    expect(names((await get('/connz?sort=subs')).body)).toEqual(['c1', 'c2', 'c0']);
    expect(names((await get('/connz?sort=uptime')).body)).toEqual(['c2', 'c1', 'c0']); // shortest first
    // `rtt` is a 2.10+ option (2.9.10 refuses it as invalid).
    for (const opt of ['pending', 'msgs_to', 'bytes_to', 'last', 'idle', ...(AGAINST_NATS_SERVER ? [] : ['rtt'])]) {
      const r = await get(`/connz?sort=${opt}`);
      expect(r.status, opt).toBe(200);
      expect(names(r.body).sort(), opt).toEqual(['c0', 'c1', 'c2']);
    }
  });

  it('refuses what nats-server refuses, with its texts', async () => {
    const refusals: Array<[string, string]> = [
      ['/connz?sort=bogus', 'invalid sorting option: bogus'],
      ['/connz?sort=stop', 'sort by stop only valid on closed connections'],
      ['/connz?sort=reason', 'sort by reason only valid on closed connections'],
      ['/connz?state=weird', 'Error decoding state for weird'],
      ['/connz?offset=x', `Error decoding int for 'offset': strconv.Atoi: parsing "x": invalid syntax`],
      ['/connz?limit=1.5', `Error decoding int for 'limit': strconv.Atoi: parsing "1.5": invalid syntax`],
      ['/connz?cid=-1', `Error decoding uint64 for 'cid': strconv.ParseUint: parsing "-1": invalid syntax`],
    ];
    for (const [path, text] of refusals) {
      const r = await get(path);
      expect([path, r.status, r.text]).toEqual([path, 400, text]);
    }
    expect((await get('/connz?state=closed&sort=stop')).status).toBe(200);
    expect((await get('/connz?state=closed&sort=reason')).status).toBe(200);
  });
});

describe('/connz details', () => {
  it('lists subscription details with subs=detail', async () => {
    const { body } = await get('/connz?subs=detail&sort=cid');
    const c1 = (body.connections as any[]).find((c) => c.name === 'c1');
    expect(c1.subscriptions_list).toBeUndefined();
    const detail = [...c1.subscriptions_list_detail].sort((a: any, b: any) => (a.subject < b.subject ? -1 : 1));
    expect(detail).toEqual([
      { subject: 'connz.1.0', qgroup: 'workers', sid: expect.any(String), msgs: 0, cid: c1.cid },
      { subject: 'connz.1.1', sid: expect.any(String), msgs: 0, max: 7, cid: c1.cid },
    ]);
    const c0 = (body.connections as any[]).find((c) => c.name === 'c0');
    expect(c0.subscriptions_list_detail).toBeUndefined();
    const plain = (await get('/connz?subs=1')).body.connections.find((c: any) => c.name === 'c1');
    expect([...plain.subscriptions_list].sort()).toEqual(['connz.1.0', 'connz.1.1']);
  });

  it('reports closed connections with state=all beside the open ones', async () => {
    const extra = await connect({ servers: server.url, name: 'gone' });
    await extra.close();
    const all = await until(async () => {
      const r = (await get('/connz?state=all')).body;
      return names(r).includes('gone') ? r : null;
    }, 10_000, 'the closed connection in state=all');
    expect(names(all).filter((n) => n !== 'gone').sort()).toEqual(['c0', 'c1', 'c2']);
    expect((all.connections as any[]).find((c) => c.name === 'gone').reason).toBe('Client Closed');
  });

  it('shows rtt once a server PING was answered', async () => {
    const body = await until(async () => {
      const r = (await get('/connz')).body;
      return (r.connections as any[]).every((c) => typeof c.rtt === 'string') ? r : null;
    }, 20_000, 'rtt on every connection');
    for (const c of body.connections as any[]) expect(c.rtt).toMatch(/^\d+(\.\d+)?(ns|µs|ms|s)$/);
  });
});
