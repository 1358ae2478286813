// Sourcing and mirroring across accounts (issue 19 item 3) with `external { api, deliver }`: account A has the
// origin and exports its consumer-create API, its flow-control replies and a deliver subject; account B
// imports them (the API under a prefix) and sources and mirrors A's stream through them. The sourcing
// stream's leader creates its consumer through `<api>.CONSUMER.CREATE.<origin>` and receives on
// `<deliver>.S.<id>`, exactly as nats-server does. A `domain` source or mirror (the client turns it into
// `external`) reaches the server's own domain API. Runs against nats-server 2.9.10 too.
import { describe, it, expect } from 'vitest';
import { connect, StringCodec } from 'nats';
import { join } from 'node:path';
import { useConfServers } from './helpers/conf-servers.js';

const AGAINST_NATS_SERVER = process.env['E2E_SERVER'] === 'nats-server';
import { until } from './helpers/until.js';

const sc = StringCodec();
const servers = useConfServers('js-sources-external', { expectCleanExit: true });

const CONF = (storeDir: string): string => `
jetstream { store_dir: "${storeDir}" }
accounts {
  A: {
    jetstream: enabled
    users: [ { user: a, password: a } ]
    exports: [
      { service: "$JS.API.CONSUMER.CREATE.>" }
      { service: "$JS.API.CONSUMER.DELETE.>" }
      { service: "$JS.FC.>" }
      { stream: "deliver.b.>" }
    ]
  }
  B: {
    jetstream: enabled
    users: [ { user: b, password: b } ]
    imports: [
      { service: { account: A, subject: "$JS.API.CONSUMER.CREATE.>" }, to: "JS.A.API.CONSUMER.CREATE.>" }
      { service: { account: A, subject: "$JS.API.CONSUMER.DELETE.>" }, to: "JS.A.API.CONSUMER.DELETE.>" }
      { service: { account: A, subject: "$JS.FC.>" } }
      { stream: { account: A, subject: "deliver.b.>" } }
    ]
  }
}`;

describe('sources and mirrors across accounts through external', () => {
  it('B sources and mirrors A’s stream: every message once, the mirror at A’s sequences', async () => {
    const server = await servers.serverWith(CONF(join(servers.dir, 'store')));
    const a = await connect({ servers: server.url, reconnect: false, user: 'a', pass: 'a' });
    const b = await connect({ servers: server.url, reconnect: false, user: 'b', pass: 'b' });
    servers.conns.push(a, b);
    const jsmA = await a.jetstreamManager();
    const jsA = a.jetstream();
    await jsmA.streams.add({ name: 'ORIG', subjects: ['orig.>'] });
    for (let i = 1; i <= 50; i++) await jsA.publish(`orig.${i % 5}`, sc.encode(`m${i}`));
    await jsmA.streams.deleteMessage('ORIG', 10);
    const jsmB = await b.jetstreamManager();
    const external = { api: 'JS.A.API', deliver: 'deliver.b' };
    await jsmB.streams.add({ name: 'AGG', subjects: ['agg'], sources: [{ name: 'ORIG', external }] });
    await jsmB.streams.add({ name: 'COPY', mirror: { name: 'ORIG', external } });
    const agg = await until(
      async () => {
        const si = await jsmB.streams.info('AGG');
        return si.state.messages === 49 ? si : null;
      },
      15_000,
      'the cross-account source',
      50,
    );
    expect(agg.sources?.[0]).toMatchObject({ name: 'ORIG', external: { api: 'JS.A.API', deliver: 'deliver.b' }, lag: 0 });
    const first = await jsmB.streams.getMessage('AGG', { seq: 1 });
    expect(sc.decode(first.data)).toBe('m1');
    const hash = first.header.get('Nats-Stream-Source').split(' ')[0];
    expect(hash.startsWith('ORIG:')).toBe(true);
    const copy = await until(
      async () => {
        const si = await jsmB.streams.info('COPY');
        return si.state.last_seq === 50 ? si : null;
      },
      15_000,
      'the cross-account mirror',
      50,
    );
    expect(copy.state.messages).toBe(49);
    expect(sc.decode((await jsmB.streams.getMessage('COPY', { seq: 50 })).data)).toBe('m50');
    expect(copy.mirror).toMatchObject({ name: 'ORIG', external: { api: 'JS.A.API', deliver: 'deliver.b' } });
    // More from A arrives in both.
    for (let i = 51; i <= 60; i++) await jsA.publish('orig.x', sc.encode(`m${i}`));
    await until(async () => (await jsmB.streams.info('AGG')).state.messages === 59 && (await jsmB.streams.info('COPY')).state.last_seq === 60, 15_000, 'both follow', 50);
    const seen: string[] = [];
    for (let seq = 1; seq <= 59; seq++) seen.push(sc.decode((await jsmB.streams.getMessage('AGG', { seq })).data));
    expect(seen).toEqual(Array.from({ length: 60 }, (_, i) => `m${i + 1}`).filter((m) => m !== 'm10'));
  }, 45_000);

  it('a source and a mirror by `domain` (the client writes external { api: $JS.<domain>.API })', async () => {
    const server = await servers.serverWith(`jetstream { store_dir: "${join(servers.dir, 'store-domain')}", domain: hub }`);
    const nc = await connect({ servers: server.url, reconnect: false });
    servers.conns.push(nc);
    const jsm = await nc.jetstreamManager();
    const js = nc.jetstream();
    await jsm.streams.add({ name: 'HUB', subjects: ['hub.>'] });
    for (let i = 1; i <= 10; i++) await js.publish('hub.x', sc.encode(`h${i}`));
    await jsm.streams.add({ name: 'HAGG', sources: [{ name: 'HUB', domain: 'hub' }] });
    await jsm.streams.add({ name: 'HMIR', mirror: { name: 'HUB', domain: 'hub' } });
    if (AGAINST_NATS_SERVER) {
      // nats-server 2.9.10 alone answers clients on $JS.hub.API but not its own sourcing requests there: the
      // source stays unconnected (active -1, no error). The client's rewrite is what can be checked.
      expect((await jsm.streams.info('HAGG')).config.sources?.[0]?.external?.api).toBe('$JS.hub.API');
      return;
    }
    const agg = await until(
      async () => {
        const si = await jsm.streams.info('HAGG');
        return si.state.messages === 10 ? si : null;
      },
      15_000,
      'the domain source',
      50,
    );
    expect(agg.config.sources?.[0]?.external?.api).toBe('$JS.hub.API');
    await until(async () => (await jsm.streams.info('HMIR')).state.last_seq === 10, 15_000, 'the domain mirror', 50);
    expect(sc.decode((await jsm.streams.getMessage('HAGG', { seq: 10 })).data)).toBe('h10');
  }, 30_000);
});
