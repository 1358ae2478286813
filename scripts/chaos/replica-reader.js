// Reads every replica of a stream (and a consumer's state on every replica) through the public API: only a
// leader answers STREAM.MSG.GET / CONSUMER.INFO, so each replica is made leader in turn by stepping the
// current leader down (asking for the target as preferred; servers that ignore that pick one themselves,
// so this repeats, bounded) and then read while it leads. Works against nats-server and Flotilla alike.
// A server whose step-down always picks the same successor (Flotilla hands over to the most caught-up
// peer, ties in a fixed order) can leave a replica unreachable that way; then, when the cluster can pause
// nodes, the leader is paused until another node wins an election ("nudge"), which picks at random.
import { sleep } from './sleep.js';

const MAX_STEPDOWNS = 25;
const STEPDOWNS_BEFORE_NUDGE = 3;
const ELECTION_WAIT_MS = 10_000;
const READ_WINDOW = 64; // MSG.GET requests in flight
const GET_ATTEMPTS = 5;

/**
 * Makes `target` the leader of whatever `leaderOf()` reports; returns true when it leads.
 * `nudge(leader, leaderOf)` (optional) forces an election away from `leader`.
 */
async function makeLeader(leaderOf, stepDown, target, nudge) {
  for (let i = 0; i <= MAX_STEPDOWNS; i++) {
    const before = await waitForLeader(leaderOf, ELECTION_WAIT_MS);
    if (before === target) return true;
    if (before === null || i === MAX_STEPDOWNS) return false;
    if (nudge && i >= STEPDOWNS_BEFORE_NUDGE) {
      await nudge(before, leaderOf);
      continue;
    }
    try {
      await stepDown(target);
    } catch {
      // a stepdown refused (no current peer yet, say): wait and try again
      await sleep(500);
      continue;
    }
    // wait for the change away from `before`
    const deadline = Date.now() + ELECTION_WAIT_MS;
    while (Date.now() < deadline) {
      const now = await leaderOf();
      if (now !== null && now !== before) break;
      await sleep(100);
    }
  }
  return false;
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
 * Reads all messages of `stream` on replica `target`: { ok, reason?, firstSeq, lastSeq, messages: Map<seq, id> }.
 * `idOf(data)` extracts the publish id from a payload.
 */
export async function readReplica(admin, stream, target, idOf, nudge = null) {
  const leaderOf = () => admin.streamLeader(stream, 1_000);
  if (!(await makeLeader(leaderOf, (pref) => admin.stepDownStream(stream, pref), target, nudge))) {
    return { ok: false, reason: `could not make ${target} the leader of ${stream}` };
  }
  const info = await admin.streamInfo(stream, 5_000);
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
  if (failed) return { ok: false, reason: failed };
  // The read only counts if the target led throughout (else some answers came from another node).
  const leaderAfter = await leaderOf();
  if (leaderAfter !== target) return { ok: false, reason: `${stream} leadership moved from ${target} to ${leaderAfter} during the read` };
  return { ok: true, firstSeq, lastSeq, messages, state: info.state };
}

/** CONSUMER.INFO as answered by `target` while it leads the consumer. */
export async function readConsumerOn(admin, stream, consumer, target, nudge = null) {
  const leaderOf = async () => {
    try {
      const info = await admin.consumerInfo(stream, consumer, 1_000);
      return info.cluster?.leader ?? null;
    } catch {
      return null;
    }
  };
  if (!(await makeLeader(leaderOf, () => admin.stepDownConsumer(stream, consumer), target, nudge))) {
    return { ok: false, reason: `could not make ${target} the leader of consumer ${stream}/${consumer}` };
  }
  const info = await admin.consumerInfo(stream, consumer, 5_000);
  if (info.cluster?.leader !== target) return { ok: false, reason: `consumer leadership moved during the read` };
  return {
    ok: true,
    delivered: info.delivered.stream_seq,
    ackFloor: info.ack_floor.stream_seq,
    numAckPending: info.num_ack_pending,
    numPending: info.num_pending,
    numRedelivered: info.num_redelivered,
  };
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
