// JetStream domains across a leaf link: a client on the hub reaches the leaf's JetStream through
// `$JS.<domain>.API.>` (the domain-less `$JS.API.>` never crosses), against a nats-server 2.9 hub and a
// Flotilla hub; and a hub stream sources and mirrors the leaf's stream with `domain` (the client writes
// `external { api: '$JS.<domain>.API' }`).
import { describe, it, expect } from 'vitest';
import { join } from 'node:path';
import { connect, StringCodec, type NatsConnection } from 'nats';
import { useConfServers } from './helpers/conf-servers.js';
import { reserveRandomPort } from './helpers/port-reservation.js';
import { useNatsServerProcesses } from './helpers/nats-server-processes.js';
import { until } from './helpers/until.js';

const sc = StringCodec();
const servers = useConfServers('leafnode-js');
const natsServers = useNatsServerProcesses();
const port = reserveRandomPort;

async function conn(p: number): Promise<NatsConnection> {
  const nc = await until(() => connect({ port: p, reconnect: false }).catch(() => null), 15_000, `server on ${p}`, 50);
  servers.conns.push(nc);
  return nc;
}

/** The leaf's JetStream answers a hub client through the domain, once the interest crossed. */
async function leafJetStreamThroughHub(hub: NatsConnection, leaf: NatsConnection): Promise<void> {
  await (await leaf.jetstreamManager()).streams.add({ name: 'LEAFS', subjects: ['leafs.>'] });
  const jsm = await until(async () => {
    try {
      const m = await hub.jetstreamManager({ domain: 'leafd', timeout: 1000 });
      return (await m.getAccountInfo()).domain === 'leafd' ? m : null;
    } catch {
      return null;
    }
  }, 20_000, 'the leaf JetStream by its domain', 200);
  const js = hub.jetstream({ domain: 'leafd' });
  for (let i = 1; i <= 5; i++) expect((await js.publish(`leafs.${i}`, sc.encode(`v${i}`))).stream).toBe('LEAFS');
  const si = await jsm.streams.info('LEAFS');
  expect(si.state.messages).toBe(5);
  expect(sc.decode((await jsm.streams.getMessage('LEAFS', { seq: 3 })).data)).toBe('v3');
}

describe('JetStream domains across a leaf', () => {
  it('a Flotilla leaf with domain leafd on a nats-server hub', async () => {
    const hubClient = port();
    const hubLeaf = port();
    natsServers.spawn(servers.writeConf(`port: ${hubClient}\nleafnodes { listen: "127.0.0.1:${hubLeaf}" }`));
    const hub = await conn(hubClient);
    const leafSrv = await servers.serverWith(`jetstream { store_dir: "${join(servers.dir, 'leaf1')}", domain: leafd }\nleafnodes { remotes: [ { url: "nats-leaf://127.0.0.1:${hubLeaf}" } ] }`);
    await leafJetStreamThroughHub(hub, await conn(leafSrv.port));
  }, 90_000);

  it('a Flotilla hub with domain hub sources and mirrors a Flotilla leaf stream by domain', async () => {
    const hubLeaf = port();
    const hubSrv = await servers.serverWith(`jetstream { store_dir: "${join(servers.dir, 'hub2')}", domain: hub }\nleafnodes { listen: "127.0.0.1:${hubLeaf}" }`);
    const leafSrv = await servers.serverWith(`jetstream { store_dir: "${join(servers.dir, 'leaf2')}", domain: leafd }\nleafnodes { remotes: [ { url: "nats-leaf://127.0.0.1:${hubLeaf}" } ] }`);
    const hub = await conn(hubSrv.port);
    const leaf = await conn(leafSrv.port);
    await leafJetStreamThroughHub(hub, leaf);
    // the hub's own JetStream answers $JS.API: the leaf's is not reached by it
    expect((await (await hub.jetstreamManager()).getAccountInfo()).domain).toBe('hub');
    const jsm = await hub.jetstreamManager();
    await jsm.streams.add({ name: 'AGG', sources: [{ name: 'LEAFS', domain: 'leafd' }] });
    await jsm.streams.add({ name: 'MIR', mirror: { name: 'LEAFS', domain: 'leafd' } });
    await until(async () => (await jsm.streams.info('AGG')).state.messages === 5, 30_000, 'the cross-domain source', 200);
    await until(async () => (await jsm.streams.info('MIR')).state.last_seq === 5, 30_000, 'the cross-domain mirror', 200);
    expect((await jsm.streams.info('AGG')).config.sources?.[0]?.external?.api).toBe('$JS.leafd.API');
    // more on the leaf follows into both
    const ljs = leaf.jetstream();
    for (let i = 6; i <= 8; i++) await ljs.publish(`leafs.${i}`, sc.encode(`v${i}`));
    await until(async () => (await jsm.streams.info('AGG')).state.messages === 8 && (await jsm.streams.info('MIR')).state.last_seq === 8, 30_000, 'both follow', 200);
    expect(sc.decode((await jsm.streams.getMessage('MIR', { seq: 8 })).data)).toBe('v8');
  }, 120_000);
});
