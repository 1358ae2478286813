// The rest of the system account and monitoring on one node, with the stock clients: an account's own nkey,
// the capability flags, Accept-Encoding on monitoring requests, the STATSZ heartbeat's cadence, /leafz,
// /gatewayz, /raftz and their `$SYS` requests, and `$JS.API.STREAM.NAMES` with no streams. With
// E2E_SERVER=nats-server the same cases run against nats-server 2.9.10; what 2.9 lacks (flags, RAFTZ,
// /raftz) is checked against Flotilla only.
import { beforeAll, describe, expect, it } from 'vitest';
import { gunzipSync } from 'node:zlib';
import { connect, headers, StringCodec, type Msg, type NatsConnection } from 'nats';
import { connect as connectV3 } from '@nats-io/transport-node';
import { jetstreamManager as jetstreamManagerV3 } from '@nats-io/jetstream';
import { runFlotilla, type FlotillaProcess } from './helpers/flotilla-process.js';
import { useConfServers } from './helpers/conf-servers.js';
import { JsonMailbox, sysAnswer } from './helpers/system-requests.js';
import { snappyUnframed } from '../packages/server/src/system-account/snappy-frames.js';

const AGAINST_NATS_SERVER = process.env['E2E_SERVER'] === 'nats-server';
const sc = StringCodec();
const ACCOUNT_KEY = 'ADY3RJ72HNGELNEK5BWSRDWIABGZJNOUSHLRYY37WZ5WVNFNB3RW66RZ';
const servers = useConfServers('sysextras', { expectCleanExit: true });

const conf = (storeDir: string): string => `
server_name: extras
jetstream { store_dir: "${storeDir}" }
accounts {
  A: { nkey: "${ACCOUNT_KEY}", users: [ { user: a, password: a } ], jetstream: enabled }
  SYS: { users: [ { user: sys, password: sys } ] }
}
system_account: SYS
`;

let server: FlotillaProcess;
let sys: NatsConnection;
let serverId: string;

async function login(user: string): Promise<NatsConnection> {
  const nc = await connect({ servers: server.url, user, pass: user, reconnect: false });
  servers.conns.push(nc);
  return nc;
}

async function requestWith(nc: NatsConnection, subject: string, acceptEncoding: string, body = ''): Promise<Msg> {
  const h = headers();
  h.set('Accept-Encoding', acceptEncoding);
  return nc.request(subject, sc.encode(body), { timeout: 2000, headers: h });
}

async function httpGet(path: string): Promise<{ status: number; text: string }> {
  const res = await fetch(`http://127.0.0.1:${server.httpPort}${path}`);
  return { status: res.status, text: await res.text() };
}

beforeAll(async () => {
  server = await servers.serverWith(conf(`${servers.dir}/js`));
  sys = await login('sys');
  serverId = sys.info!.server_id;
});

describe("an account's own nkey", () => {
  it('the account runs under its config name: its users log in, events and ACCOUNTZ name it A', async () => {
    const events = new JsonMailbox(sys, '$SYS.ACCOUNT.*.CONNECT');
    await sys.flush();
    const a = await login('a');
    const event = await events.next();
    expect(event.subject).toBe('$SYS.ACCOUNT.A.CONNECT');
    expect(event.json['client']['acc']).toBe('A');
    events.sub.unsubscribe();
    const accountz = await sysAnswer(sys, '$SYS.REQ.SERVER.PING.ACCOUNTZ');
    expect(accountz['data']['accounts']).toContain('A');
    expect(accountz['data']['accounts']).not.toContain(ACCOUNT_KEY);
    await a.close();
  });
});

describe.skipIf(AGAINST_NATS_SERVER)('an account name that would leave the store directory (nats-server accepts it)', () => {
  it('with JetStream: the server refuses to start, naming the account and why (exit 1)', async () => {
    const file = servers.writeConf(`jetstream { store_dir: "${servers.dir}/js-bad" }\naccounts {\n  "../escape": { jetstream: enabled, users: [ { user: e, password: e } ] }\n}`);
    const r = await runFlotilla(['-c', file], servers.dir);
    expect(r.stderr).toContain('account name "../escape" can not have JetStream in flotilla: the name is its store directory');
    expect(r.code).toBe(1);
  });
});

describe('capability flags', () => {
  it('JetStream on, accounts configured, none of them with JetStream: the server still says jetstream', async () => {
    const other = await servers.serverWith(`jetstream { store_dir: "${servers.dir}/js-none" }\naccounts {\n  A: { users: [ { user: a, password: a } ] }\n  SYS: { users: [ { user: sys, password: sys } ] }\n}\nsystem_account: SYS`);
    const nc = await connect({ servers: other.url, user: 'sys', pass: 'sys', reconnect: false });
    servers.conns.push(nc);
    const r = await sysAnswer(nc, '$SYS.REQ.SERVER.PING');
    expect(r['server']['jetstream']).toBe(true);
    if (!AGAINST_NATS_SERVER) expect(r['server']['flags']).toBe(3);
  });


  it.skipIf(AGAINST_NATS_SERVER)('with JetStream: 3 (JetStreamEnabled | BinaryStreamSnapshot), jetstream true', async () => {
    const r = await sysAnswer(sys, '$SYS.REQ.SERVER.PING');
    expect(r['server']['jetstream']).toBe(true);
    expect(r['server']['flags']).toBe(3);
  });
});

describe('Accept-Encoding on monitoring requests (zReq)', () => {
  it('gzip: Content-Encoding gzip, the body gunzips to the answer', async () => {
    const m = await requestWith(sys, '$SYS.REQ.SERVER.PING.VARZ', 'gzip, deflate');
    expect(m.headers?.get('Content-Encoding')).toBe('gzip');
    const r = JSON.parse(gunzipSync(m.data).toString('utf8'));
    expect(r['server']['id']).toBe(serverId);
    expect(r['data']).toMatchObject({ server_id: serverId, server_name: 'extras' });
  });

  it('an encoding nats-server does not write: uncompressed, Content-Encoding identity', async () => {
    const m = await requestWith(sys, `$SYS.REQ.SERVER.${serverId}.CONNZ`, 'br');
    expect(m.headers?.get('Content-Encoding')).toBe('identity');
    expect(JSON.parse(sc.decode(m.data))['data']['server_id']).toBe(serverId);
  });

  it('snappy or s2 (first, even next to gzip): Content-Encoding snappy, the Snappy framing format', async () => {
    for (const accept of ['snappy', 's2', 'gzip, snappy']) {
      const m = await requestWith(sys, '$SYS.REQ.SERVER.PING.VARZ', accept);
      expect(m.headers?.get('Content-Encoding')).toBe('snappy');
      expect(JSON.parse(snappyUnframed(m.data).toString('utf8'))['data']['server_id']).toBe(serverId);
    }
  });

  it('an answer larger than one 64 KiB snappy chunk (SUBSZ with 1,500 subscriptions) reads back whole', async () => {
    const a = await login('a');
    for (let i = 0; i < 1500; i++) a.subscribe(`big.subject.number.${i}.with.some.length`);
    await a.flush();
    const m = await requestWith(sys, `$SYS.REQ.ACCOUNT.A.SUBSZ`, 'snappy', JSON.stringify({ limit: 2000 }));
    expect(m.headers?.get('Content-Encoding')).toBe('snappy');
    const text = snappyUnframed(m.data).toString('utf8');
    expect(text.length).toBeGreaterThan(65_536);
    const subs = (JSON.parse(text)['data']['subscriptions_list'] as Array<{ subject: string }>).filter((x) => x.subject.startsWith('big.'));
    expect(subs).toHaveLength(1500);
    await a.close();
  });

  it('an error answer and STATSZ (not zReq) stay uncompressed, without the header', async () => {
    const bad = await requestWith(sys, '$SYS.REQ.SERVER.PING.VARZ', 'gzip', '{bad');
    expect(bad.headers?.get('Content-Encoding') ?? '').toBe('');
    expect(JSON.parse(sc.decode(bad.data))['error']['code']).toBe(400);
    const statsz = await requestWith(sys, '$SYS.REQ.SERVER.PING.STATSZ', 'gzip');
    expect(statsz.headers?.get('Content-Encoding') ?? '').toBe('');
    expect(JSON.parse(sc.decode(statsz.data))['statsz']['connections']).toBeGreaterThanOrEqual(1);
  });
});

describe('the STATSZ heartbeat', () => {
  it('a reply-less PING.STATSZ broadcasts on $SYS.SERVER.<id>.STATSZ at once', async () => {
    const beats = new JsonMailbox(sys, `$SYS.SERVER.${serverId}.STATSZ`);
    await sys.flush();
    const sentMs = Date.now();
    sys.publish('$SYS.REQ.SERVER.PING.STATSZ');
    const beat = await beats.next(2000);
    expect(Date.now() - sentMs).toBeLessThan(1000);
    expect(beat.json['server']['id']).toBe(serverId);
    expect(beat.json['statsz']['connections']).toBeGreaterThanOrEqual(1);
    beats.sub.unsubscribe();
  });

  // 2.14: 250 ms, 1.25 s, 3.25 s, 7.25 s ... (the 750 ms beat falls in the 1 s rate window); 2.9.10 has no window
  it('from a fresh server: the interval doubles from beat to beat', async () => {
    const fresh = await servers.serverWith(conf(`${servers.dir}/js-fresh`));
    const nc = await connect({ servers: fresh.url, user: 'sys', pass: 'sys', reconnect: false });
    servers.conns.push(nc);
    const beats = new JsonMailbox(nc, `$SYS.SERVER.${nc.info!.server_id}.STATSZ`);
    await nc.flush();
    // Three beats, by the time each says it was sent: whichever the connection catches first (startup takes
    // a second or two), the second gap is twice the first (at the latest the beats of 3.75 s, 7.75 s, 15.75 s).
    const at: number[] = [];
    while (at.length < 3) at.push(Date.parse((await beats.next(9000)).json['server']['time']));
    const gaps = at.slice(1).map((t, i) => t - at[i]!);
    expect(gaps[1]! / gaps[0]!).toBeGreaterThan(1.6);
    expect(gaps[1]! / gaps[0]!).toBeLessThan(2.4);
    expect(gaps.at(-1)!).toBeLessThan(10_500);
    beats.sub.unsubscribe();
  }, 25_000);
});

/** 2.14's Leafz starts from an empty slice (`[]`); 2.9.10's from nil (`null`). */
const NO_LEAFS = AGAINST_NATS_SERVER ? null : [];

describe('leafz and gatewayz: none served', () => {
  it('$SYS.REQ.SERVER.PING.LEAFZ / .GATEWAYZ and the account LEAFZ: nats-server shapes, empty', async () => {
    const leafz = await sysAnswer(sys, '$SYS.REQ.SERVER.PING.LEAFZ');
    expect(leafz['data']).toMatchObject({ server_id: serverId, leafnodes: 0, leafs: NO_LEAFS });
    expect(Date.parse(leafz['data']['now'])).toBeGreaterThan(0);
    const gw = await sysAnswer(sys, `$SYS.REQ.SERVER.${serverId}.GATEWAYZ`);
    expect(gw['data']).toMatchObject({ server_id: serverId, outbound_gateways: {}, inbound_gateways: {} });
    expect(gw['data']['name']).toBeUndefined();
    const accLeafz = await sysAnswer(sys, '$SYS.REQ.ACCOUNT.A.LEAFZ');
    expect(accLeafz['data']).toMatchObject({ server_id: serverId, leafnodes: 0, leafs: NO_LEAFS });
  });

  it('/leafz and /gatewayz over HTTP; a bad boolean is a 400 with nats-server text', async () => {
    const leafz = await httpGet('/leafz?subs=1');
    expect(leafz.status).toBe(200);
    expect(JSON.parse(leafz.text)).toMatchObject({ server_id: serverId, leafnodes: 0, leafs: NO_LEAFS });
    const gw = await httpGet('/gatewayz?accs=true&subs=detail');
    expect(gw.status).toBe(200);
    expect(JSON.parse(gw.text)).toMatchObject({ server_id: serverId, outbound_gateways: {}, inbound_gateways: {} });
    const bad = await httpGet('/leafz?subs=maybe');
    expect(bad.status).toBe(400);
    expect(bad.text).toBe(`Error decoding boolean for 'subs': strconv.ParseBool: parsing "maybe": invalid syntax`);
  });
});

describe.skipIf(AGAINST_NATS_SERVER)('raftz on a node without Raft groups (2.9 has no raftz)', () => {
  it('/raftz: 404 "No Raft nodes registered"; RAFTZ over NATS: an empty map', async () => {
    const http = await httpGet('/raftz');
    expect(http.status).toBe(404);
    expect(http.text).toBe('No Raft nodes registered');
    const r = await sysAnswer(sys, '$SYS.REQ.SERVER.PING.RAFTZ');
    expect(r['server']['id']).toBe(serverId);
    expect(r['data']).toEqual({});
  });
});

describe('$JS.API.STREAM.NAMES with no streams', () => {
  it('answers "streams": null (LIST and CONSUMER lists answer []); both stock clients list nothing', async () => {
    const a = await login('a');
    const names = JSON.parse(sc.decode((await a.request('$JS.API.STREAM.NAMES', sc.encode(''), { timeout: 2000 })).data));
    expect(names).toEqual({ type: 'io.nats.jetstream.api.v1.stream_names_response', total: 0, offset: 0, limit: 1024, streams: null });
    const list = JSON.parse(sc.decode((await a.request('$JS.API.STREAM.LIST', sc.encode(''), { timeout: 2000 })).data));
    expect(list['streams']).toEqual([]);
    const filtered = JSON.parse(sc.decode((await a.request('$JS.API.STREAM.NAMES', sc.encode(JSON.stringify({ subject: 'none.>' })), { timeout: 2000 })).data));
    expect(filtered['streams']).toBeNull();

    const jsm = await a.jetstreamManager();
    const v2: string[] = [];
    for await (const n of jsm.streams.names()) v2.push(n);
    expect(v2).toEqual([]);
    await expect(jsm.streams.find('none.x')).rejects.toThrow('no stream matches subject');

    const a3 = await connectV3({ servers: server.url, user: 'a', pass: 'a', reconnect: false });
    try {
      const jsm3 = await jetstreamManagerV3(a3);
      const v3: string[] = [];
      for await (const n of jsm3.streams.names()) v3.push(n);
      expect(v3).toEqual([]);
      await expect(jsm3.streams.find('none.x')).rejects.toThrow('no stream matches subject');
      await jsm3.streams.add({ name: 'ONE', subjects: ['one.>'] });
      const after: string[] = [];
      for await (const n of jsm.streams.names()) after.push(n);
      expect(after).toEqual(['ONE']);
      expect(await jsm3.streams.find('one.x')).toBe('ONE');
      await jsm3.streams.delete('ONE');
    } finally {
      await a3.close();
    }
  });
});
