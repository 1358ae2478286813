// A server announces itself with a STATSZ when a new server joins its cluster (nats-server's processNewServer),
// out of its heartbeat's turn: once node 1's beats are 4 s apart (the next due 8 s later), node 2 joins and node
// 1's next STATSZ comes within seconds of that. Runs against nats-server 2.9.10 too (E2E_SERVER=nats-server).
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { connect, type NatsConnection } from 'nats';
import { startNode, stopAll, waitForMesh, type ClusterNodeProcess } from './helpers/cluster-process.js';
import { JsonMailbox } from './helpers/system-requests.js';

const AGAINST_NATS_SERVER = process.env['E2E_SERVER'] === 'nats-server';
const dir = mkdtempSync(join(tmpdir(), 'flotilla-statsz-cluster-'));
const conns: NatsConnection[] = [];
const nodes: ClusterNodeProcess[] = [];

afterAll(async () => {
  await Promise.all(conns.map((nc) => nc.close().catch(() => undefined)));
  await stopAll(nodes);
  rmSync(dir, { recursive: true, force: true });
});

describe('STATSZ when a server joins', () => {
  it("node 1 sends one soon after node 2 links, well before its heartbeat's next turn", async () => {
    const conf = join(dir, 'sys.conf');
    writeFileSync(conf, 'accounts { SYS: { users: [ { user: sys, password: sys } ] } }\nsystem_account: SYS\n');
    const natsServer = AGAINST_NATS_SERVER;
    const n1 = await startNode({ name: 'n1', clusterName: 'statszc', extraArgs: ['-c', conf], natsServer });
    nodes.push(n1);
    const sys = await connect({ servers: n1.url, user: 'sys', pass: 'sys', reconnect: false });
    conns.push(sys);
    const beats = new JsonMailbox(sys, `$SYS.SERVER.${sys.info!.server_id}.STATSZ`);
    await sys.flush();

    // Wait for the first gap of about 4 s (the beat 3.25 s/3.75 s after start to the one at 7.25 s/7.75 s).
    let last = Date.parse((await beats.next(9000)).json['server']['time']);
    for (let i = 0; i < 6; i++) {
      const t = Date.parse((await beats.next(9000)).json['server']['time']);
      const gap = t - last;
      last = t;
      if (gap >= 3500) break;
    }
    const n2 = await startNode({ name: 'n2', clusterName: 'statszc', routes: [`127.0.0.1:${n1.clusterPort}`], extraArgs: ['-c', conf], natsServer });
    nodes.push(n2);
    await waitForMesh(nodes);
    const linkedMs = Date.now();
    const announced = Date.parse((await beats.next(6000)).json['server']['time']);
    // The regular beat is due 8 s after `last`; the announcement comes when the link is up.
    expect(announced - last).toBeLessThan(7000);
    expect(announced).toBeGreaterThan(linkedMs - 3000);
    beats.sub.unsubscribe();
  }, 40_000);
});
