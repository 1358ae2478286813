// Cluster authentication: the secret's challenge-response on its own, then ClusterNodes in one process
// over real gRPC with a shared secret (right, wrong, missing) and with mutual TLS (right CA, other CA).
import { describe, it, expect, afterEach } from 'vitest';
import * as grpc from '@grpc/grpc-js';
import {
  ClusterNode,
  LINK_METHOD_PATH,
  LINK_PROTOCOL_VERSION,
  computeProof,
  decodeBatch,
  encodeBatch,
  type Frame,
  loadClusterTls,
  newNonce,
  secretOf,
  verifyProof,
  type ClusterListener,
  type ClusterLogger,
  type ClusterTlsMaterial,
  type InterestFrame,
  type PeerView,
  type ProofInput,
  type RaftMessageWire,
  type RoutedMessageFrame,
} from '@flotilla/cluster';
import { makeClusterCertificates } from '../../../test/helpers/cluster-certificates.js';
import { until } from '../../../test/helpers/until.js';

interface LogLine {
  level: string;
  obj: object;
  msg: string;
}

class Recorder implements ClusterListener {
  up: PeerView[] = [];
  interests: InterestFrame[] = [];
  messages: RoutedMessageFrame[] = [];
  raft: RaftMessageWire[] = [];
  peerUp(p: PeerView): void {
    this.up.push(p);
  }
  peerDown(): void {}
  interest(_peerId: string, update: InterestFrame): void {
    this.interests.push(update);
  }
  message(_peerId: string, msg: RoutedMessageFrame): void {
    this.messages.push(msg);
  }
}

const nodes: ClusterNode[] = [];
afterEach(async () => {
  await Promise.all(nodes.splice(0).map((n) => n.stop()));
});

let idCounter = 0;
function makeNode(name: string, opts: { routes?: string[]; secret?: string; routeSecrets?: Map<string, string>; tls?: ClusterTlsMaterial; authTimeoutMs?: number } = {}) {
  const logs: LogLine[] = [];
  const log = (level: string) => (obj: object, msg: string) => logs.push({ level, obj, msg });
  const logger: ClusterLogger = { info: log('info'), warn: log('warn'), error: log('error'), debug: log('debug') };
  const node = new ClusterNode({
    clusterName: 'unit',
    serverName: name,
    serverId: `AUTH${String(++idCounter).padStart(4, '0')}${name}`,
    clientUrl: `127.0.0.1:${5000 + idCounter}`,
    listen: { host: '127.0.0.1', port: -1 },
    routes: opts.routes ?? [],
    log: logger,
    pingIntervalMs: 200,
    staleAfterMs: 2000,
    ...(opts.secret !== undefined ? { secret: opts.secret } : {}),
    ...(opts.routeSecrets ? { routeSecrets: opts.routeSecrets } : {}),
    ...(opts.tls ? { tls: opts.tls } : {}),
    ...(opts.authTimeoutMs !== undefined ? { authTimeoutMs: opts.authTimeoutMs } : {}),
  });
  const rec = new Recorder();
  node.listener = rec;
  node.onRaft = (m) => rec.raft.push(m);
  nodes.push(node);
  return { node, rec, logs };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

const SECRET = secretOf({ user: 'route', password: 's3cr3t-pw-XYZ' });

describe('cluster secret proof', () => {
  const input = (): ProofInput => ({ role: 'dialer', verifierNonce: newNonce(), proverNonce: newNonce(), proverId: 'A', verifierId: 'B' });

  it('verifies with the same secret and inputs only', () => {
    const p = input();
    const proof = computeProof(SECRET, p);
    expect(proof).toHaveLength(32);
    expect(verifyProof(SECRET, p, proof)).toBe(true);
    expect(verifyProof(secretOf({ user: 'route', password: 'wrong' }), p, proof)).toBe(false);
    expect(verifyProof(SECRET, { ...p, verifierNonce: newNonce() }, proof)).toBe(false);
    // Reflection: the same proof does not pass for the other role or with the ids swapped.
    expect(verifyProof(SECRET, { ...p, role: 'acceptor' }, proof)).toBe(false);
    expect(verifyProof(SECRET, { ...p, proverId: 'B', verifierId: 'A' }, proof)).toBe(false);
    expect(verifyProof(SECRET, p, proof.subarray(0, 16))).toBe(false);
    expect(verifyProof(SECRET, { ...p, proverNonce: new Uint8Array(0) }, proof)).toBe(false);
  });

  it('derives distinct keys from user/password and token', () => {
    expect(secretOf(undefined)).toBe('');
    expect(secretOf({})).toBe('');
    expect(secretOf({ token: 't' })).not.toBe(secretOf({ user: 't' }));
    expect(secretOf({ user: 'a', password: 'bc' })).not.toBe(secretOf({ user: 'ab', password: 'c' }));
  });
});

describe('ClusterNode with a shared secret', () => {
  it('links nodes that share the secret (route URL credentials override the node secret)', async () => {
    const a = makeNode('a', { secret: SECRET });
    await a.node.start();
    const b = makeNode('b', { routes: [a.node.clusterUrl], secret: secretOf({ token: 'other' }), routeSecrets: new Map([[a.node.clusterUrl, SECRET]]) });
    await b.node.start();
    await until(() => a.node.peers().length === 1 && b.node.peers().length === 1);
    const aId = b.node.peers()[0]!.serverId;
    b.node.send(aId, { msg: { subject: 'x', reply: '', message: Buffer.from('hi'), headerBytes: -1, queues: [], route: '' } });
    await until(() => a.rec.messages.length === 1);
    expect(JSON.stringify(a.logs) + JSON.stringify(b.logs)).not.toContain('s3cr3t-pw-XYZ');
  });

  for (const [label, rogueSecret, code] of [
    ['a wrong secret', secretOf({ user: 'route', password: 'guess' }), 'refusing route: cluster secret mismatch'],
    ['no secret', undefined, 'refusing route: peer presented no cluster secret'],
  ] as const) {
    it(`refuses a node with ${label}: no link, no interest, messages or Raft accepted, logged`, async () => {
      const a = makeNode('a', { secret: SECRET });
      await a.node.start();
      const rogue = makeNode('rogue', { routes: [a.node.clusterUrl], ...(rogueSecret ? { secret: rogueSecret } : {}) });
      await rogue.node.start();
      await until(() => a.logs.some((l) => l.level === 'error' && l.msg === code));
      // A rogue without a secret links on its side for a moment; whatever it sends must be ignored.
      for (const peer of rogue.node.peers()) {
        rogue.node.send(peer.serverId, { interest: { full: true, entries: [{ subject: '>', queue: '', count: 1, clients: 1 }] } });
        rogue.node.send(peer.serverId, { msg: { subject: 'x', reply: '', message: Buffer.from('evil'), headerBytes: -1, queues: [], route: '' } });
      }
      await sleep(500);
      expect(a.node.peers()).toHaveLength(0);
      expect(a.rec.up).toHaveLength(0);
      expect(a.rec.interests).toHaveLength(0);
      expect(a.rec.messages).toHaveLength(0);
      expect(a.rec.raft).toHaveLength(0);
      expect(rogue.rec.interests).toHaveLength(0);
      const line = a.logs.find((l) => l.msg === code)!;
      expect(line.obj).toMatchObject({ peer: 'rogue' });
      expect(JSON.stringify(a.logs) + JSON.stringify(rogue.logs)).not.toContain('s3cr3t-pw-XYZ');
    });
  }
});

const RAFT_VOTE: RaftMessageWire = {
  group: 'g', type: 2, from: 99, to: 1, term: 7, logTerm: 0, index: 0, entries: [], commit: 0, reject: false,
  hintIndex: 0, hintTerm: 0, context: 0, force: false, snapshotMeta: null, offset: 0, data: new Uint8Array(0), done: false,
};

/** A hand-driven link: sends the given frames in one batch and collects what the node answers. */
async function rawLink(url: string, frames: (received: Frame[]) => Frame[]): Promise<Frame[]> {
  const client = new grpc.Client(url, grpc.credentials.createInsecure());
  const call = client.makeBidiStreamRequest<Frame[], Frame[]>(LINK_METHOD_PATH, encodeBatch, decodeBatch, new grpc.Metadata());
  const received: Frame[] = [];
  call.on('data', (batch: Frame[]) => {
    received.push(...batch);
    if (received.length === batch.length) call.write(frames(received));
  });
  call.on('error', () => undefined);
  await new Promise<void>((resolve) => {
    call.on('status', () => resolve());
    setTimeout(resolve, 1500).unref();
  });
  call.cancel();
  client.close();
  return received;
}

describe('ClusterNode admits nothing before the proof', () => {
  for (const [label, withAuth] of [['a forged proof', true], ['no proof', false]] as const) {
    it(`drops interest, messages and Raft sent along with ${label}, and refuses the link`, async () => {
      const a = makeNode('a', { secret: SECRET });
      await a.node.start();
      const received = await rawLink(a.node.clusterUrl, (got) => {
        const hello = (got[0] as { hello: { nonce: Uint8Array } }).hello;
        expect(hello.nonce).toHaveLength(16);
        const forged: Frame[] = withAuth ? [{ auth: { proof: computeProof(secretOf({ token: 'guess' }), { role: 'dialer', verifierNonce: hello.nonce, proverNonce: new Uint8Array(16), proverId: 'EVIL', verifierId: 'x' }) } }] : [];
        return [
          { hello: { clusterName: 'unit', serverName: 'evil', serverId: 'EVIL', clientUrl: '', clusterUrl: '', raftNodeId: 99, version: LINK_PROTOCOL_VERSION, nonce: new Uint8Array(16), auth: withAuth } },
          { interest: { full: true, entries: [{ subject: '>', queue: '', count: 1, clients: 1 }] } },
          ...forged,
          { interest: { full: true, entries: [{ subject: '>', queue: '', count: 1, clients: 1 }] } },
          { msg: { subject: 'x', reply: '', message: Buffer.from('evil'), headerBytes: -1, queues: [], route: '' } },
          { raft: RAFT_VOTE },
        ];
      });
      const refusal = received.find((f): f is { refuse: { code: 'bad_auth' | 'auth_required'; reason: string } } => 'refuse' in f);
      expect(refusal?.refuse.code).toBe(withAuth ? 'bad_auth' : 'auth_required');
      expect(a.node.peers()).toHaveLength(0);
      expect(a.rec.up).toHaveLength(0);
      expect(a.rec.interests).toHaveLength(0);
      expect(a.rec.messages).toHaveLength(0);
      expect(a.rec.raft).toHaveLength(0);
      expect(a.logs.some((l) => l.level === 'error' && /^refusing route: (cluster secret mismatch|peer presented no cluster secret)$/.test(l.msg))).toBe(true);
    });
  }
});

/**
 * A link that sends its Hello (claiming a secret) and then only pings, every 100 ms, so it never looks stale;
 * collects what the node answers until the call ends or `boundMs` passes.
 */
async function linkThatNeverProves(url: string, boundMs: number): Promise<{ frames: Frame[]; endedAfterMs: number }> {
  const client = new grpc.Client(url, grpc.credentials.createInsecure());
  const call = client.makeBidiStreamRequest<Frame[], Frame[]>(LINK_METHOD_PATH, encodeBatch, decodeBatch, new grpc.Metadata());
  const frames: Frame[] = [];
  const started = Date.now();
  call.on('data', (batch: Frame[]) => frames.push(...batch));
  call.on('error', () => undefined);
  call.write([{ hello: { clusterName: 'unit', serverName: 'slow', serverId: 'SLOW', clientUrl: '', clusterUrl: '', raftNodeId: 98, version: LINK_PROTOCOL_VERSION, nonce: new Uint8Array(16), auth: true } }]);
  const pinger = setInterval(() => call.write([{ ping: { sentMs: Date.now() } }]), 100);
  let endedAfterMs = -1;
  await new Promise<void>((resolve) => {
    call.on('status', () => {
      endedAfterMs = Date.now() - started;
      resolve();
    });
    setTimeout(resolve, boundMs).unref();
  });
  clearInterval(pinger);
  call.cancel();
  client.close();
  return { frames, endedAfterMs };
}

describe('ClusterNode authentication timeout', () => {
  it('refuses an inbound link that has not proven the secret within the timeout, though it keeps sending', async () => {
    const a = makeNode('a', { secret: SECRET, authTimeoutMs: 300 });
    await a.node.start();
    // The stale-link check (2 s without traffic) never fires for this link: it pings every 100 ms.
    const { frames, endedAfterMs } = await linkThatNeverProves(a.node.clusterUrl, 1800);
    const refusal = frames.find((f): f is { refuse: { code: string; reason: string } } => 'refuse' in f);
    expect(refusal?.refuse).toEqual({ code: 'auth_required', reason: 'authentication timeout' });
    expect(endedAfterMs).toBeGreaterThanOrEqual(0);
    expect(a.node.peers()).toHaveLength(0);
    expect(a.rec.up).toHaveLength(0);
    const line = a.logs.find((l) => l.msg === 'refusing route: authentication timeout');
    expect(line?.level).toBe('error');
    expect(line?.obj).toMatchObject({ peer: 'slow', timeoutMs: 300 });
  });

  it('leaves links that authenticate in time alone', async () => {
    const a = makeNode('a', { secret: SECRET, authTimeoutMs: 300 });
    await a.node.start();
    const b = makeNode('b', { secret: SECRET, routes: [a.node.clusterUrl] });
    await b.node.start();
    await until(() => a.node.peers().length === 1 && b.node.peers().length === 1);
    await new Promise((r) => setTimeout(r, 600));
    expect(a.node.peers().map((p) => p.serverName)).toEqual(['b']);
    expect(a.logs.some((l) => l.msg === 'refusing route: authentication timeout')).toBe(false);
  });
});

describe('ClusterNode over mutual TLS', () => {
  const certs = makeClusterCertificates();
  const tlsOf = (name: string): ClusterTlsMaterial => loadClusterTls({ ...certs.node(name), caFile: certs.caFile });

  it('links nodes with certificates from the cluster CA and refuses one from another CA', async () => {
    const a = makeNode('a', { tls: tlsOf('a') });
    await a.node.start();
    const b = makeNode('b', { routes: [a.node.clusterUrl], tls: tlsOf('b') });
    await b.node.start();
    await until(() => a.node.peers().length === 1 && b.node.peers().length === 1);

    // Trusts the cluster CA but presents a certificate from another CA.
    const rogue = makeNode('rogue', { routes: [a.node.clusterUrl], tls: loadClusterTls({ certFile: certs.rogue.certFile, keyFile: certs.rogue.keyFile, caFile: certs.caFile }) });
    await rogue.node.start();
    // A plain (no TLS) node is refused too.
    const plain = makeNode('plain', { routes: [a.node.clusterUrl] });
    await plain.node.start();
    await until(() => a.logs.filter((l) => l.level === 'error' && l.msg.startsWith('refusing route: TLS handshake failed')).length >= 2);
    await sleep(300);
    expect(a.node.peers().map((p) => p.serverName)).toEqual(['b']);
    expect(rogue.node.peers()).toHaveLength(0);
    expect(plain.node.peers()).toHaveLength(0);
    expect(a.rec.up.map((p) => p.serverName)).toEqual(['b']);
  });
});
