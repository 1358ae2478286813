// Reads every replica of a stream (and a consumer's state on every replica) through the public API: only a
// leader answers STREAM.MSG.GET / CONSUMER.INFO, so each replica is made leader in turn by stepping the
// current leader down (asking for the target as preferred; servers that ignore that pick one themselves,
// so this repeats, bounded) and then read while it leads. Works against nats-server and Flotilla alike.
// A server whose step-down always picks the same successor (Flotilla hands over to the most caught-up
// peer, ties in a fixed order) can leave a replica unreachable that way; then, when the cluster can pause
// nodes, the leader is paused until another node wins an election ("nudge"), which picks at random.
// Whoever leads is read first, so no leadership change is wasted.
import { sleep } from './sleep.js';

const MAX_STEPDOWNS = 25;
// CHAOS_TRACE=1 logs every leadership move of the final reads (why a read takes long)
const trace = process.env.CHAOS_TRACE === '1' ? (text) => process.stderr.write(`  [read ${new Date().toISOString().slice(11, 23)}] ${text}\n`) : () => {};
const FRUITLESS_BEFORE_NUDGE = 2;
const ELECTION_WAIT_MS = 10_000;
const READ_WINDOW = 64; // MSG.GET requests in flight
const GET_ATTEMPTS = 5;

/**
 * Calls `visit(name)` once for every name in `peers` while that node leads: reads whoever leads now, then
 * steps the leader down (asking for an unvisited peer) or, after a step-down that landed on a node already
 * visited, nudges (`nudge(leader, leaderOf)` forces an election away from it). Bounded by MAX_STEPDOWNS.
 * Returns name -> visit result, or { ok: false, reason } for peers it never reached.
 */
async function visitEachAsLeader(peers, leaderOf, stepDown, nudge, visit, what) {
  const results = new Map();
  let fruitless = 0; // leadership changes in a row that reached no unvisited peer
  for (let i = 0; i <= MAX_STEPDOWNS && results.size < peers.length; i++) {
    const leader = await waitForLeader(leaderOf, ELECTION_WAIT_MS);
    trace(`${what}: leader ${leader}, visited ${[...results.keys()].join(',') || 'none'}, fruitless ${fruitless}`);
    if (leader === null) break;
    if (peers.includes(leader) && !results.has(leader)) {
      const r = await visit(leader);
      // a visit that lost the leadership half-way is repeated when that node leads again
      if (r.ok || r.retry !== true) results.set(leader, r);
      fruitless = 0;
      continue;
    }
    const next = peers.find((p) => !results.has(p));
    if (nudge && fruitless >= FRUITLESS_BEFORE_NUDGE) {
      trace(`${what}: nudging ${leader}`);
      await nudge(leader, leaderOf);
    } else {
      try {
        trace(`${what}: step-down of ${leader}, asking for ${next}`);
        await stepDown(next);
      } catch {
        await sleep(500); // refused (no current peer yet, say): try again
        continue;
      }
      await waitForChange(leaderOf, leader);
    }
    fruitless++;
  }
  for (const p of peers) if (!results.has(p)) results.set(p, { ok: false, reason: `could not make ${p} the leader of ${what}` });
  return results;
}

async function waitForChange(leaderOf, from) {
  const deadline = Date.now() + ELECTION_WAIT_MS;
  while (Date.now() < deadline) {
    const now = await leaderOf();
    if (now !== null && now !== from) return;
    await sleep(100);
  }
}

async function waitForLeader(leaderOf, timeoutMs) {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const l = await leaderOf();
    if (l !== null) return l;
    await sleep(200);
  }
  return null;
}

/** The stream's peers: the leader and the names in `cluster.replicas`. */
export async function streamPeers(admin, stream) {
  const info = await admin.retrying(`STREAM.INFO ${stream}`, () => admin.streamInfo(stream), 30_000);
  const names = [info.cluster?.leader, ...(info.cluster?.replicas ?? []).map((r) => r.name)].filter(Boolean);
  return [...new Set(names)].sort();
}

/**
 * Reads all messages of `stream` on every peer: name -> { ok, reason?, firstSeq, lastSeq, messages: Map<seq, id> }.
 * `idOf(data)` extracts the publish id from a payload.
 */
export async function readReplicas(admin, stream, peers, idOf, nudge = null) {
  const leaderOf = () => admin.streamLeader(stream, 1_000);
  return visitEachAsLeader(peers, leaderOf, (pref) => admin.stepDownStream(stream, pref), nudge, (target) => readWhileLeading(admin, stream, target, idOf, leaderOf), stream);
}

async function readWhileLeading(admin, stream, target, idOf, leaderOf) {
  const info = await admin.streamInfo(stream, 5_000);
  if (info.cluster?.leader !== target) return { ok: false, retry: true, reason: `${target} lost the leadership of ${stream}` };
  const firstSeq = info.state.first_seq;
  const lastSeq = info.state.last_seq;
  const messages = new Map();
  let next = firstSeq;
  let failed = null;
  const worker = async () => {
    while (failed === null && next <= lastSeq && lastSeq > 0) {
      const seq = next++;
      for (let attempt = 1; ; attempt++) {
        try {
          const m = await admin.getMessage(stream, seq, 2_000);
          if (m) messages.set(seq, idOf(m.data));
          break;
        } catch (err) {
          if (attempt >= GET_ATTEMPTS) {
            failed = `MSG.GET ${stream} seq ${seq}: ${err.message}`;
            break;
          }
          await sleep(200);
        }
      }
    }
  };
  await Promise.all(Array.from({ length: READ_WINDOW }, worker));
  // The read only counts if the target led throughout (else some answers came from another node).
  const leaderAfter = await leaderOf();
  if (leaderAfter !== target) return { ok: false, retry: true, reason: `${stream} leadership moved from ${target} to ${leaderAfter} during the read` };
  if (failed) return { ok: false, reason: failed };
  return { ok: true, firstSeq, lastSeq, messages, state: info.state };
}

/** CONSUMER.INFO as answered by each peer while it leads the consumer: name -> state. */
export async function readConsumerStates(admin, stream, consumer, peers, nudge = null) {
  const infoNow = () => admin.consumerInfo(stream, consumer, 1_000).catch(() => null);
  const leaderOf = async () => (await infoNow())?.cluster?.leader ?? null;
  return visitEachAsLeader(peers, leaderOf, () => admin.stepDownConsumer(stream, consumer), nudge, async (target) => {
    const info = await infoNow();
    if (info?.cluster?.leader !== target) return { ok: false, retry: true, reason: 'consumer leadership moved during the read' };
    return {
      ok: true,
      delivered: info.delivered.stream_seq,
      ackFloor: info.ack_floor.stream_seq,
      numAckPending: info.num_ack_pending,
      numPending: info.num_pending,
      numRedelivered: info.num_redelivered,
    };
  }, `consumer ${stream}/${consumer}`);
}

/** A nudge that pauses the leader (SIGSTOP) until another node leads, bounded, then resumes it. */
export function pauseNudge(cluster) {
  if (!cluster.supports('pause')) return null;
  return async (leader, leaderOf) => {
    await cluster.pause(leader);
    try {
      const deadline = Date.now() + ELECTION_WAIT_MS * 2;
      while (Date.now() < deadline) {
        const now = await leaderOf();
        if (now !== null && now !== leader) return;
        await sleep(100);
      }
    } finally {
      await cluster.resume(leader);
    }
  };
}
