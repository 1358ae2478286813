// /varz against nats-server 2.14.5's Varz struct (server/monitor.go): the key list below is that struct's JSON
// names in declaration order, each marked `omitempty` or not. Flotilla serves every key that is not
// omitempty, nothing outside the list but `flotilla_version`, in the struct's order, with nats-server's values
// for the defaults (auth_timeout, tls_timeout, http_req_stats, jetstream.config sized from the machine as
// dynJetStreamConfig does: 75% of memory, 75% of the store's available disk). With E2E_SERVER=nats-server the
// same file checks the list against 2.9.10: every key it serves is in 2.14's list, and its values agree.
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { statfsSync } from 'node:fs';
import { totalmem } from 'node:os';
import { connect } from 'nats';
import { startJetStreamServer, type JetStreamServer } from './helpers/jetstream-server.js';
import { AGAINST_NATS_SERVER } from './helpers/js-cluster.js';

/** [json name, omitempty] of nats-server 2.14.5's Varz, in declaration order. */
export const VARZ_2_14_KEYS: ReadonlyArray<readonly [string, boolean]> = [
  ['server_id', false], ['server_name', false], ['version', false], ['proto', false], ['git_commit', true], ['go', false],
  ['host', false], ['port', false], ['auth_required', true], ['tls_required', true], ['tls_verify', true],
  ['tls_ocsp_peer_verify', true], ['ip', true], ['connect_urls', true], ['ws_connect_urls', true], ['max_connections', false],
  ['max_subscriptions', true], ['ping_interval', false], ['ping_max', false], ['http_host', false], ['http_port', false],
  ['http_base_path', false], ['https_port', false], ['auth_timeout', false], ['max_control_line', false], ['max_payload', false],
  ['max_pending', false], ['cluster', false], ['gateway', false], ['leaf', false], ['mqtt', false], ['websocket', false],
  ['jetstream', false], ['tls_timeout', false], ['write_deadline', false], ['write_timeout', true], ['start', false], ['now', false],
  ['uptime', false], ['mem', false], ['cores', false], ['gomaxprocs', false], ['gomemlimit', true], ['cpu', false],
  ['connections', false], ['total_connections', false], ['routes', false], ['remotes', false], ['leafnodes', false],
  ['in_msgs', false], ['in_bytes', false], ['in_client_msgs', false], ['in_client_bytes', false], ['out_msgs', false],
  ['out_bytes', false], ['out_client_msgs', false], ['out_client_bytes', false], ['slow_consumers', false],
  ['stale_connections', false], ['stalled_clients', false], ['subscriptions', false], ['http_req_stats', false],
  ['config_load_time', false], ['config_digest', false], ['tags', true], ['metadata', true], ['feature_flags', true],
  ['trusted_operators_jwt', true], ['trusted_operators_claim', true], ['system_account', true], ['pinned_account_fails', true],
  ['ocsp_peer_cache', true], ['slow_consumer_stats', false], ['stale_connection_stats', true], ['disk_io_wait_stats', false],
  ['proxies', true], ['tls_cert_not_after', true],
];
const FLOTILLA_ONLY = ['flotilla_version'];

let s: JetStreamServer;
const varz = async (): Promise<Record<string, any>> => (await (await fetch(`http://127.0.0.1:${s.server.httpPort}/varz`)).json()) as Record<string, any>;

beforeAll(async () => {
  s = await startJetStreamServer('flotilla-varz-keys-');
});
afterAll(async () => {
  await s.stop();
});

describe('/varz keys', () => {
  it('are 2.14 Varz keys, in its order, with every key that is not omitempty', async () => {
    const v = await varz();
    const names = VARZ_2_14_KEYS.map(([k]) => k);
    const served = Object.keys(v).filter((k) => !FLOTILLA_ONLY.includes(k));
    expect(served.filter((k) => !names.includes(k))).toEqual([]);
    if (AGAINST_NATS_SERVER) return; // 2.9.10 predates several 2.14 keys; the list above is what it must fit in
    expect(VARZ_2_14_KEYS.filter(([k, omit]) => !omit && !(k in v)).map(([k]) => k)).toEqual([]);
    expect(served).toEqual(names.filter((k) => served.includes(k)));
  });

  it('has nats-server\'s defaults and counters', async () => {
    await varz();
    const v = await varz();
    expect(v['auth_timeout']).toBe(2);
    expect(v['tls_timeout']).toBe(2);
    expect(v['http_base_path']).toBe('');
    expect(v['https_port']).toBe(0);
    expect(v['http_req_stats']['/varz']).toBeGreaterThanOrEqual(2);
    expect(v['system_account']).toBe('$SYS');
    expect(Date.parse(v['config_load_time'])).toBeLessThanOrEqual(Date.parse(v['now']));
    expect(v['gomaxprocs']).toBe(v['cores']);
    expect(v['leafnodes']).toBe(0);
    if (!AGAINST_NATS_SERVER) {
      expect(v['config_digest']).toBe(''); // no config file
      expect(v['slow_consumer_stats']).toEqual({ clients: 0, routes: 0, gateways: 0, leafs: 0 });
    }
  });

  it('sizes JetStream from the machine when the config sets no limits', async () => {
    const v = await varz();
    const cfg = v['jetstream']['config'] as { max_memory: number; max_storage: number };
    expect(cfg.max_memory).toBe(Math.floor(totalmem() / 4) * 3);
    const fs = statfsSync(s.storeDir);
    const disk = Math.floor((fs.bavail * fs.bsize) / 4) * 3;
    // Measured at the server's start; the disk moves a little under other writers since.
    expect(Math.abs(cfg.max_storage - disk) / disk).toBeLessThan(0.05);
  });

  it.skipIf(AGAINST_NATS_SERVER)('counts client traffic apart from the internal and routed one', async () => {
    const before = await varz();
    const nc = await connect({ servers: s.server.url });
    nc.subscribe('varz.keys');
    for (let i = 0; i < 5; i++) nc.publish('varz.keys', 'abc');
    await nc.flush();
    const after = await varz();
    await nc.close();
    expect(after['in_client_msgs'] - before['in_client_msgs']).toBeGreaterThanOrEqual(5);
    expect(after['out_client_msgs'] - before['out_client_msgs']).toBeGreaterThanOrEqual(5);
    expect(after['in_client_bytes'] - before['in_client_bytes']).toBeGreaterThanOrEqual(15);
  });
});
