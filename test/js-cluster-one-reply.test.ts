// Exactly one node answers each JetStream API request in a cluster (issue 24 item 3): the stream leader for
// stream calls, the meta leader for catalogue calls; a follower that has not heard of a new leader yet, or a
// node rejoining after a restart, stays silent. Raw core requests with one reply subject per request, replies
// counted per subject over a linger.
//
// Two replies never happen: the node a request enters by relays the first answer only (api-ingress.ts). Zero
// replies are allowed only where nats-server is silent too: a stream call while the stream's group has no
// leader yet (sent before that stream's CREATE was answered) or is electing one (sent between a
// STREAM.LEADER.STEPDOWN request and the moment STREAM.INFO names the new leader), and a catalogue call between
// a META.LEADER.STEPDOWN request and the moment /jsz names the new meta leader. Other catalogue calls, and every
// call while a node that leads nothing restarts and rejoins, get exactly one reply. On an oversubscribed machine
// the test bounds the unanswered instead (see expectReplies).
import { cpus, loadavg } from 'node:os';
import { describe, expect, it } from 'vitest';
import { createInbox, type NatsConnection } from 'nats';
import { JsCluster, useJsCluster, addStream, apiRequest } from './helpers/js-cluster.js';
import { sleep } from './helpers/flotilla-process.js';

let cluster: JsCluster;
useJsCluster({ size: 3, clusterName: 'ONEREPLY' }, (c) => (cluster = c));

const enc = new TextEncoder();
const dec = new TextDecoder();
/** Replies are counted this long after the last request (past every server-side wait: 3 s threshold + 250 ms). */
const LINGER_MS = 4_000;

interface Sent {
  subject: string;
  sentMs: number;
  replies: Array<{ atMs: number; leader?: string; error?: number }>;
}

/** Fires requests (one reply subject each) through the given connections and records every reply. */
class ReplyCounter {
  private readonly sent = new Map<string, Sent>();
  /** One reply prefix per connection: each reply reaches only the connection that asked. */
  private readonly prefixes: string[];
  private readonly subs: Array<{ unsubscribe(): void }> = [];

  constructor(private readonly conns: NatsConnection[]) {
    this.prefixes = conns.map(() => createInbox());
    for (const [k, nc] of conns.entries()) {
      const sub = nc.subscribe(`${this.prefixes[k]}.>`);
      this.subs.push(sub);
      void (async () => {
        for await (const m of sub) {
          const s = this.sent.get(m.subject);
          if (!s) continue;
          const body = JSON.parse(dec.decode(m.data)) as { cluster?: { leader?: string }; error?: { err_code: number } };
          s.replies.push({ atMs: Date.now(), ...(body.cluster?.leader ? { leader: body.cluster.leader } : {}), ...(body.error ? { error: body.error.err_code } : {}) });
        }
      })();
    }
  }

  /** Sends one request through connection `i % conns`. */
  send(i: number, subject: string): void {
    const reply = `${this.prefixes[i % this.conns.length]}.${i}`;
    this.sent.set(reply, { subject, sentMs: Date.now(), replies: [] });
    this.conns[i % this.conns.length]!.publish(subject, enc.encode(''), { reply });
  }

  /** Sends `subjects` round robin every `everyMs` until `until()` resolves. */
  async stream(subjects: string[], everyMs: number, until: Promise<unknown>): Promise<void> {
    let done = false;
    void until.finally(() => (done = true));
    for (let i = this.sent.size; !done; i++) {
      this.send(i, subjects[i % subjects.length]!);
      await sleep(everyMs);
    }
    await Promise.all(this.conns.map((nc) => nc.flush()));
  }

  async results(): Promise<Sent[]> {
    await sleep(LINGER_MS);
    for (const s of this.subs) s.unsubscribe();
    return [...this.sent.values()];
  }
}

/**
 * Checks the replies: never two, and exactly one where `mustAnswer` says so. On a heavily oversubscribed
 * machine (1-minute load above twice the cores, as when several clusters' tests and other work share 2 cores) a
 * stream leader starved of its followers' answers steps down through its quorum check (~600 ms) and is
 * re-elected, and in those gaps a request can go unanswered: there the test bounds how often (at most 15% of
 * those that must be answered). Two replies stay refused however loaded.
 */
function expectReplies(label: string, sent: Sent[], mustAnswer: (s: Sent) => boolean): void {
  const load = loadavg()[0] ?? 0;
  const oversubscribed = load > 2 * cpus().length;
  const doubles = sent.filter((s) => s.replies.length > 1);
  const required = sent.filter(mustAnswer);
  const missed = required.filter((s) => s.replies.length === 0);
  const facts = { label, load: Math.round(load * 10) / 10, requests: sent.length, doubles: doubles.length, required: required.length, missed: missed.length };
  if (doubles.length > 0 || missed.length > 0) console.log('odd replies', JSON.stringify(facts), JSON.stringify(doubles.slice(0, 3)), JSON.stringify(missed.slice(0, 3)));
  for (const s of sent) expect({ subject: s.subject, replies: s.replies.length <= 1 ? 'at most one' : s.replies }).toEqual({ subject: s.subject, replies: 'at most one' });
  if (!oversubscribed) {
    for (const s of required) expect({ subject: s.subject, replies: s.replies.length }).toEqual({ subject: s.subject, replies: 1 });
    return;
  }
  expect(missed.length, JSON.stringify(facts)).toBeLessThanOrEqual(Math.floor(required.length * 0.15));
}

function summary(sent: Sent[]): { requests: number; byCount: Record<number, number> } {
  const byCount: Record<number, number> = {};
  for (const s of sent) byCount[s.replies.length] = (byCount[s.replies.length] ?? 0) + 1;
  return { requests: sent.length, byCount };
}

describe('one reply per API request', () => {
  it('during R3 stream creation: STREAM.INFO and INFO never get two replies; after the create answers, exactly one', async () => {
    const conns = await Promise.all(['n1', 'n2', 'n3'].map((n) => cluster.connect(n)));
    const jsm = await conns[0]!.jetstreamManager();
    const createdAt = new Map<string, number>();
    const counter = new ReplyCounter(conns);
    const names = Array.from({ length: 4 }, (_, k) => `FRESH${k}`);
    const subjects = names.flatMap((n) => [`$JS.API.STREAM.INFO.${n}`]).concat('$JS.API.INFO');
    const created = (async () => {
      for (const [k, name] of names.entries()) {
        await sleep(30);
        await addStream(jsm, { name, subjects: [`fresh${k}.>`], num_replicas: 3 });
        createdAt.set(name, Date.now());
        // Keep asking for a while after the create answered: the window where a follower lagged.
        await sleep(400);
      }
    })();
    await counter.stream(subjects, 3, created);
    const all = await counter.results();
    // Catalogue calls, and stream calls once that stream's create answered (its leader leads), get exactly one.
    expectReplies('creation', all, (s) => {
      const name = s.subject.split('.')[4];
      const createdMs = name === undefined ? 0 : (createdAt.get(name) ?? Infinity);
      return s.sentMs > createdMs;
    });
    console.log('creation', JSON.stringify(summary(all)));
    expect(all.length).toBeGreaterThan(300);
  }, 90_000);

  it('during leader step-downs: at most one reply, and exactly one outside the election window', async () => {
    const conns = await Promise.all(['n1', 'n2', 'n3'].map((n) => cluster.connect(n)));
    const jsm = await conns[0]!.jetstreamManager();
    await addStream(jsm, { name: 'MOVING', subjects: ['moving.>'], num_replicas: 3 });
    const js = conns[0]!.jetstream();
    for (let i = 0; i < 10; i++) await js.publish('moving.x', enc.encode(`m${i}`));
    const counter = new ReplyCounter(conns);
    const windows: Array<[number, number]> = [];
    const moves = (async () => {
      for (let i = 0; i < 4; i++) {
        await sleep(300);
        const before = await cluster.streamLeader(jsm, 'MOVING');
        const from = Date.now();
        await apiRequest(conns[1]!, '$JS.API.STREAM.LEADER.STEPDOWN.MOVING', '', 5_000);
        // Short requests: one sent inside the election window may get no reply.
        for (const deadline = Date.now() + 10_000; Date.now() < deadline; ) {
          const info = await apiRequest(conns[2]!, '$JS.API.STREAM.INFO.MOVING', '', 300).catch(() => null);
          const now = (info?.['cluster'] as { leader?: string } | undefined)?.leader;
          if (now !== undefined && now !== before) break;
        }
        windows.push([from, Date.now()]);
      }
      await sleep(300);
    })();
    await counter.stream(['$JS.API.STREAM.INFO.MOVING', '$JS.API.CONSUMER.NAMES.MOVING', '$JS.API.INFO'], 4, moves);
    const sent = await counter.results();
    console.log('step-downs', JSON.stringify(summary(sent)), 'windows ms', windows.map(([a, b]) => b - a).join(','));
    expect(sent.length).toBeGreaterThan(250);
    const inWindow = (t: number) => windows.some(([a, b]) => t >= a && t <= b);
    // Catalogue calls never depend on the stream's leader; stream calls only inside a step-down's window.
    expectReplies('step-downs', sent, (s) => s.subject === '$JS.API.INFO' || !inWindow(s.sentMs));
  }, 90_000);

  it('during meta leader step-downs: catalogue calls get at most one reply, and exactly one outside the election window', async () => {
    const conns = await Promise.all(['n1', 'n2', 'n3'].map((n) => cluster.connect(n)));
    const jsm = await conns[0]!.jetstreamManager();
    await addStream(jsm, { name: 'CATALOGUED', subjects: ['catalogued.>'], num_replicas: 3 });
    const counter = new ReplyCounter(conns);
    const windows: Array<[number, number]> = [];
    const moves = (async () => {
      for (let i = 0; i < 5; i++) {
        await sleep(300);
        const before = await cluster.metaLeaderName();
        const from = Date.now();
        await apiRequest(conns[i % 3]!, '$JS.API.META.LEADER.STEPDOWN', '', 5_000).catch(() => null);
        // The window ends once every node names the new meta leader (a request sent before may go unanswered).
        for (const deadline = Date.now() + 10_000; Date.now() < deadline; await sleep(20)) {
          const now = await cluster.metaLeaderName();
          if (now !== '' && now !== before) break;
        }
        windows.push([from, Date.now()]);
      }
      await sleep(300);
    })();
    await counter.stream(['$JS.API.INFO', '$JS.API.STREAM.NAMES', '$JS.API.STREAM.INFO.CATALOGUED'], 4, moves);
    const sent = await counter.results();
    console.log('meta step-downs', JSON.stringify(summary(sent)), 'windows ms', windows.map(([a, b]) => b - a).join(','));
    expect(sent.length).toBeGreaterThan(250);
    const inWindow = (t: number) => windows.some(([a, b]) => t >= a && t <= b);
    // A stream's calls never depend on the meta leader; catalogue calls only inside a step-down's window.
    expectReplies('meta step-downs', sent, (s) => s.subject.startsWith('$JS.API.STREAM.INFO') || !inWindow(s.sentMs));
  }, 90_000);

  it('while a follower restarts (kill -9) and rejoins: never two replies, and one to every request it does not delay', async () => {
    const conns = await Promise.all(['n1', 'n2', 'n3'].map((n) => cluster.connect(n)));
    const jsm = await conns[0]!.jetstreamManager();
    await addStream(jsm, { name: 'REJOIN', subjects: ['rejoin.>'], num_replicas: 3 });
    const leader = await cluster.streamLeader(jsm, 'REJOIN');
    const meta = await cluster.metaLeaderName();
    // Restart a node that leads neither the stream nor the meta group; ask through the other two.
    const victim = ['n1', 'n2', 'n3'].find((n) => n !== leader && n !== meta)!;
    const others = ['n1', 'n2', 'n3'].filter((n) => n !== victim);
    const via = others.map((n) => conns[Number(n.slice(1)) - 1]!);
    const counter = new ReplyCounter(via);
    const marks: number[] = [];
    const t0 = Date.now();
    const restart = (async () => {
      await sleep(300);
      marks.push(Date.now() - t0);
      await cluster.kill(victim);
      await sleep(500);
      marks.push(Date.now() - t0);
      await cluster.restart(victim);
      marks.push(Date.now() - t0);
      await sleep(3_000);
    })();
    await counter.stream(['$JS.API.STREAM.INFO.REJOIN', '$JS.API.INFO', '$JS.API.STREAM.NAMES'], 5, restart);
    const sent = await counter.results();
    console.log('restart', JSON.stringify(summary(sent)));
    const odd = sent.filter((s) => s.replies.length !== 1);
    if (odd.length > 0) console.log('restart odd', JSON.stringify(odd.slice(0, 6).map((s) => ({ subject: s.subject, at: s.sentMs - sent[0]!.sentMs, replies: s.replies }))), 'kill/restart at', JSON.stringify(marks));
    expect(sent.length).toBeGreaterThan(300);
    expectReplies('restart', sent, () => true);
  }, 90_000);
});
