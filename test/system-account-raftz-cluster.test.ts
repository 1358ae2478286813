// `$SYS.REQ.SERVER.PING.RAFTZ` and `$SYS.REQ.SERVER.<id>.RAFTZ` on three real nodes with JetStream accounts:
// every node answers with its Raft groups, meta groups under the system account and each stream's group under
// the stream's account (`{"account": "A"}`), as nats-server files them. nats-server 2.9.10 has
// no RAFTZ.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connect, createInbox, StringCodec, type NatsConnection } from 'nats';
import { freePort, startNode, stopAll, type ClusterNodeProcess } from './helpers/cluster-process.js';
import { AGAINST_NATS_SERVER } from './helpers/js-cluster.js';
import { until } from './helpers/until.js';

const sc = StringCodec();
const NAMES = ['n1', 'n2', 'n3'];
let root: string;
let nodes: ClusterNodeProcess[] = [];
const conns: NatsConnection[] = [];

function confOf(name: string, clusterPort: number, routes: number[]): string {
  return `
server_name: ${name}
jetstream { store_dir: "${join(root, name)}" }
cluster { name: RAFTZACC, listen: "127.0.0.1:${clusterPort}", routes: [ ${routes.map((p) => `"nats://127.0.0.1:${p}"`).join(', ')} ] }
accounts {
  A: { jetstream: enabled, users: [ { user: a, password: a } ] }
  SYS: { users: [ { user: sys, password: sys } ] }
}
system_account: SYS`;
}

/** Every node's answer to a request on the system account (one per node, gathered within `windowMs`). */
async function allAnswers(nc: NatsConnection, subject: string, body: unknown, windowMs = 1500): Promise<Array<Record<string, any>>> {
  const inbox = createInbox();
  const answers: Array<Record<string, any>> = [];
  const sub = nc.subscribe(inbox, { callback: (_e, m) => answers.push(JSON.parse(sc.decode(m.data)) as Record<string, any>) });
  nc.publish(subject, sc.encode(JSON.stringify(body)), { reply: inbox });
  await new Promise((r) => setTimeout(r, windowMs));
  sub.unsubscribe();
  return answers;
}

beforeAll(async () => {
  if (AGAINST_NATS_SERVER) return;
  root = mkdtempSync(join(tmpdir(), 'flotilla-raftz-accounts-'));
  const ports = [await freePort(), await freePort(), await freePort()];
  nodes = await Promise.all(
    NAMES.map((name, i) => {
      const file = join(root, `${name}.conf`);
      writeFileSync(file, confOf(name, ports[i]!, ports.filter((_, j) => j !== i)));
      return startNode({ name, clusterName: 'RAFTZACC', rawClusterArgs: ['-c', file] });
    }),
  );
}, 60_000);

afterAll(async () => {
  await Promise.all(conns.map((nc) => nc.close().catch(() => undefined)));
  await stopAll(nodes);
  if (root !== undefined) rmSync(root, { recursive: true, force: true });
});

async function login(node: number, user: string): Promise<NatsConnection> {
  const nc = await connect({ servers: nodes[node]!.url, user, pass: user, reconnect: false });
  conns.push(nc);
  return nc;
}

describe.skipIf(AGAINST_NATS_SERVER)('RAFTZ over the system account, with JetStream accounts in a cluster', () => {
  it('PING.RAFTZ: one answer per node, meta groups under SYS; {"account":"A"}: the R3 stream group on every node', async () => {
    const sys = await login(0, 'sys');
    const a = await login(1, 'a');
    const jsm = await until(async () => {
      try {
        const m = await a.jetstreamManager();
        await m.streams.add({ name: 'RZA', subjects: ['rza.>'], num_replicas: 3 });
        return m;
      } catch {
        return undefined;
      }
    }, 20_000, 'the R3 stream created in account A', 250);
    expect((await jsm.streams.info('RZA')).config.num_replicas).toBe(3);

    const metas = await until(async () => {
      const answers = await allAnswers(sys, '$SYS.REQ.SERVER.PING.RAFTZ', {});
      return answers.length === 3 && answers.every((r) => Object.keys(r['data']?.['SYS'] ?? {}).length > 0) ? answers : undefined;
    }, 15_000, 'three RAFTZ answers with meta groups', 100);
    expect(new Set(metas.map((r) => r['server']['name']))).toEqual(new Set(NAMES));
    for (const r of metas) {
      expect(Object.keys(r['data'])).toEqual(['SYS']);
      for (const [group, g] of Object.entries(r['data']['SYS'] as Record<string, Record<string, unknown>>)) {
        expect(group.startsWith('_meta_')).toBe(true);
        expect(g).toMatchObject({ size: 3, quorum_needed: 2 });
      }
    }

    const streams = await until(async () => {
      const answers = await allAnswers(sys, '$SYS.REQ.SERVER.PING.RAFTZ', { account: 'A' });
      const groups = answers.map((r) => Object.entries((r['data']?.['A'] ?? {}) as Record<string, Record<string, unknown>>));
      return answers.length === 3 && groups.every((g) => g.length === 1) && groups.filter((g) => g[0]![1]['state'] === 'LEADER').length === 1 ? groups : undefined;
    }, 15_000, 'the stream group in every node\'s RAFTZ for A', 100);
    const names = new Set(streams.map((g) => g[0]![0]));
    expect(names.size).toBe(1);
    expect([...names][0]).toMatch(/^S-/);

    // one node by id, one group by name
    const id = metas.find((r) => r['server']['name'] === 'n3')!['server']['id'] as string;
    const one = await allAnswers(sys, `$SYS.REQ.SERVER.${id}.RAFTZ`, { account: 'A', group: [...names][0] });
    expect(one).toHaveLength(1);
    expect(one[0]!['server']['name']).toBe('n3');
    expect(Object.keys(one[0]!['data']['A'])).toEqual([...names]);
  }, 60_000);
});
