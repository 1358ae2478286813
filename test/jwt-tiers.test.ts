// Tiered JetStream limits from account JWTs (`limits.tiered_limits`, R1 and R3), stock clients: a stream's
// limits are its replica count's tier's, its streams and bytes count in that tier, `$JS.API.INFO` shows
// `tiers` with each tier's usage, reservations and limits (the top-level limits zero), and a stream with no
// applicable tier is refused with 10120. One node and a three-node cluster. With E2E_SERVER=nats-server
// every case runs against nats-server 2.9 to show it is its behaviour, where 2.9 differs from 2.14 as noted:
// 2.9 has no reserved_* figures, and reserves a tiered stream's max_bytes once per replica (2.14's
// accountReservation: once, a tier's limits being per replica).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { join } from 'node:path';
import { connect, credsAuthenticator, StringCodec, type NatsConnection } from 'nats';
import { useConfServers } from './helpers/conf-servers.js';
import { AccountsCluster, api, apiSettled, fileStream } from './helpers/accounts-cluster.js';
import { AGAINST_NATS_SERVER } from './helpers/js-cluster.js';
import { TestOperator, testUser, type TestAccount } from './helpers/operator-jwts.js';
import { until } from './helpers/until.js';

const sc = StringCodec();
const { conns, dir, serverWith } = useConfServers('jwt-tiers');
const KIB = 1024;
const MIB = 1024 * 1024;

/** nats-server's zero JetStreamAccountLimits: the top-level limits of an account with tiers. */
const ZERO_LIMITS = {
  max_memory: 0,
  max_storage: 0,
  max_streams: 0,
  max_consumers: 0,
  max_ack_pending: 0,
  memory_max_stream_bytes: 0,
  storage_max_stream_bytes: 0,
  max_bytes_required: false,
};

/** A JWT tier as nsc writes it (every field; -1 none). */
function jwtTier(l: { disk: number; mem: number; streams: number; consumer: number }): object {
  return { disk_storage: l.disk, mem_storage: l.mem, streams: l.streams, consumer: l.consumer, max_ack_pending: -1, mem_max_stream_bytes: -1, disk_max_stream_bytes: -1, max_bytes_required: false };
}

/** The same tier as `$JS.API.INFO` shows its limits. */
function infoLimits(l: { disk: number; mem: number; streams: number; consumer: number }): object {
  return { max_memory: l.mem, max_storage: l.disk, max_streams: l.streams, max_consumers: l.consumer, max_ack_pending: -1, memory_max_stream_bytes: -1, storage_max_stream_bytes: -1, max_bytes_required: false };
}

/** A tier of `$JS.API.INFO` (nats-server 2.9 shows no reservations). */
function tierInfo(t: { memory: number; storage: number; reservedMemory: number; reservedStorage: number; streams: number; consumers: number; limits: object }): object {
  const { reservedMemory, reservedStorage, ...rest } = t;
  return AGAINST_NATS_SERVER ? rest : { ...rest, reserved_memory: reservedMemory, reserved_storage: reservedStorage };
}

/** A top-level reservation figure (absent from nats-server 2.9). */
function reserved(n: number): number | undefined {
  return AGAINST_NATS_SERVER ? undefined : n;
}

async function login(url: string, account: TestAccount): Promise<NatsConnection> {
  const u = await testUser(account);
  const nc = await connect({ servers: url, reconnect: false, authenticator: credsAuthenticator(u.creds) });
  conns.push(nc);
  return nc;
}

function errCode(reply: Record<string, unknown>): number | undefined {
  return (reply['error'] as { err_code?: number } | undefined)?.err_code;
}

type Info = Record<string, unknown> & { tiers?: Record<string, Record<string, unknown>> };

describe('one node', () => {
  const R1 = { disk: 4 * KIB, mem: -1, streams: 1, consumer: 2 };
  const R3 = { disk: MIB, mem: -1, streams: 3, consumer: -1 };
  let op: TestOperator;
  let tiered: TestAccount;
  let r3only: TestAccount;
  let url: string;

  beforeAll(async () => {
    op = await TestOperator.create();
    tiered = await op.account('TIERED', { limits: { tiered_limits: { R1: jwtTier(R1), R3: jwtTier(R3) } } } as never);
    r3only = await op.account('R3ONLY', { limits: { tiered_limits: { R3: jwtTier(R3) } } } as never);
    url = (await serverWith(`${op.conf([tiered, r3only])}\njetstream { store_dir: "${join(dir, 'js')}" }`)).url;
  });

  it('an R1 stream counts against R1: the second refused with 10027, max_consumers over the tier’s 10026, bytes over it 10002', async () => {
    const nc = await login(url, tiered);
    expect(errCode(await api(nc, '$JS.API.STREAM.CREATE.WIDE', fileStream('WIDE', 1, { max_consumers: 3 })))).toBe(10026);
    const one = await api(nc, '$JS.API.STREAM.CREATE.ONE', fileStream('ONE', 1));
    expect(errCode(one)).toBeUndefined();
    expect(errCode(await api(nc, '$JS.API.STREAM.CREATE.TWO', fileStream('TWO', 1)))).toBe(10027);
    // 4 KiB in R1: three 1000-byte messages fit (1030 bytes each as stored), the fourth does not
    const body = 'x'.repeat(1000);
    for (let i = 0; i < 3; i++) {
      const ack = JSON.parse(sc.decode((await nc.request('one.a', sc.encode(body), { timeout: 5000 })).data)) as Record<string, unknown>;
      expect(ack['seq']).toBe(i + 1);
    }
    const full = JSON.parse(sc.decode((await nc.request('one.a', sc.encode(body), { timeout: 5000 })).data)) as Record<string, unknown>;
    expect(errCode(full)).toBe(10002);

    const info = (await api(nc, '$JS.API.INFO')) as Info;
    const stored = ((await api(nc, '$JS.API.STREAM.INFO.ONE'))['state'] as { bytes: number }).bytes;
    expect(stored).toBe(3 * (30 + 'one.a'.length + 1000));
    expect(info['memory']).toBe(0);
    expect(info['storage']).toBe(stored);
    expect(info['reserved_memory']).toBe(reserved(0));
    expect(info['reserved_storage']).toBe(reserved(0));
    expect(info['streams']).toBe(1);
    expect(info['consumers']).toBe(0);
    expect(info['limits']).toEqual(ZERO_LIMITS);
    expect(Object.keys(info.tiers ?? {}).sort()).toEqual(['R1', 'R3']);
    expect(info.tiers?.['R1']).toEqual(tierInfo({ memory: 0, storage: stored, reservedMemory: 0, reservedStorage: 0, streams: 1, consumers: 0, limits: infoLimits(R1) }));
    expect(info.tiers?.['R3']).toEqual(tierInfo({ memory: 0, storage: 0, reservedMemory: 0, reservedStorage: 0, streams: 0, consumers: 0, limits: infoLimits(R3) }));
  });

  it('a stream no tier applies to is refused with 10120', async () => {
    const nc = await login(url, r3only);
    const reply = await api(nc, '$JS.API.STREAM.CREATE.S', fileStream('S', 1));
    expect(reply['error']).toEqual({ code: 400, err_code: 10120, description: 'no JetStream default or applicable tiered limit present' });
    const info = (await api(nc, '$JS.API.INFO')) as Info;
    expect(info['streams']).toBe(0);
    expect(info.tiers).toEqual({ R3: tierInfo({ memory: 0, storage: 0, reservedMemory: 0, reservedStorage: 0, streams: 0, consumers: 0, limits: infoLimits(R3) }) });
  });
});

describe('three nodes', () => {
  const R1 = { disk: 10 * MIB, mem: -1, streams: 1, consumer: -1 };
  const R3 = { disk: 3 * MIB, mem: -1, streams: 2, consumer: -1 };
  let op: TestOperator;
  let tiered: TestAccount;
  let cluster: AccountsCluster;

  beforeAll(async () => {
    op = await TestOperator.create();
    tiered = await op.account('TIERED', { limits: { tiered_limits: { R1: jwtTier(R1), R3: jwtTier(R3) } } } as never);
    cluster = await AccountsCluster.start('TIERS', op.conf([tiered]));
  }, 120_000);
  afterAll(async () => {
    await cluster?.close();
  });

  it('R3 streams count against R3 (max_bytes once, not per replica), refused at its limit while R1 is still allowed; INFO per tier', async () => {
    const nc = await login(cluster.node('n1').url, tiered);
    // 2.14: a tier's limits are per replica, so an R3 stream reserves its 2 MiB of R3's 3 MiB once
    // (2.9: three times, refused)
    let r3Reserved = 2 * MIB;
    const a = await apiSettled(nc, '$JS.API.STREAM.CREATE.R3A', fileStream('R3A', 3, { max_bytes: r3Reserved }));
    if (AGAINST_NATS_SERVER) {
      expect(errCode(a)).toBe(10047);
      r3Reserved = MIB;
      expect(errCode(await apiSettled(nc, '$JS.API.STREAM.CREATE.R3A', fileStream('R3A', 3, { max_bytes: r3Reserved })))).toBeUndefined();
    } else {
      expect(errCode(a)).toBeUndefined();
    }
    // and R3's storage is then fully reserved
    expect(errCode(await apiSettled(nc, '$JS.API.STREAM.CREATE.R3X', fileStream('R3X', 3, { max_bytes: 3 * MIB - r3Reserved + 1 })))).toBe(10047);
    const b = await apiSettled(nc, '$JS.API.STREAM.CREATE.R3B', { ...fileStream('R3B', 3), storage: 'memory' });
    expect(errCode(b)).toBeUndefined();
    expect(errCode(await apiSettled(nc, '$JS.API.STREAM.CREATE.R3C', { ...fileStream('R3C', 3), storage: 'memory' }))).toBe(10027);
    const r1 = await apiSettled(nc, '$JS.API.STREAM.CREATE.R1A', fileStream('R1A', 1, { max_bytes: 2 * MIB }));
    expect(errCode(r1)).toBeUndefined();
    expect(errCode(await apiSettled(nc, '$JS.API.STREAM.CREATE.R1B', fileStream('R1B', 1)))).toBe(10027);
    const consumer = await apiSettled(nc, '$JS.API.CONSUMER.DURABLE.CREATE.R1A.D', { stream_name: 'R1A', config: { durable_name: 'D', ack_policy: 'explicit' } });
    expect(errCode(consumer)).toBeUndefined();

    const ack = JSON.parse(sc.decode((await nc.request('r3a.x', sc.encode('hello'), { timeout: 10_000 })).data)) as Record<string, unknown>;
    expect(ack['seq']).toBe(1);
    const bytes = ((await apiSettled(nc, '$JS.API.STREAM.INFO.R3A'))['state'] as { bytes: number }).bytes;
    expect(bytes).toBe(30 + 'r3a.x'.length + 5);

    // asked on another node; a stream's bytes count on each of its replicas
    const other = await login(cluster.node('n3').url, tiered);
    const info = await until(
      async () => {
        const i = (await apiSettled(other, '$JS.API.INFO')) as Info;
        return i.tiers?.['R3']?.['storage'] === 3 * bytes ? i : null;
      },
      30_000,
      'R3 usage of every replica',
      250,
    );
    expect(info['memory']).toBe(0);
    expect(info['storage']).toBe(3 * bytes);
    expect(info['reserved_memory']).toBe(reserved(0));
    expect(info['reserved_storage']).toBe(reserved(2 * MIB + r3Reserved));
    expect(info['streams']).toBe(3);
    expect(info['consumers']).toBe(1);
    expect(info['limits']).toEqual(ZERO_LIMITS);
    expect(Object.keys(info.tiers ?? {}).sort()).toEqual(['R1', 'R3']);
    expect(info.tiers?.['R1']).toEqual(tierInfo({ memory: 0, storage: 0, reservedMemory: 0, reservedStorage: 2 * MIB, streams: 1, consumers: 1, limits: infoLimits(R1) }));
    expect(info.tiers?.['R3']).toEqual(tierInfo({ memory: 0, storage: 3 * bytes, reservedMemory: 0, reservedStorage: r3Reserved, streams: 2, consumers: 0, limits: infoLimits(R3) }));
  }, 120_000);
});
