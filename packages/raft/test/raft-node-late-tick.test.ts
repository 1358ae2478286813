// A tick whose timer fires late (the node's own event loop was busy) runs after the I/O that arrived meanwhile:
// Node runs the timers phase before the poll phase, so ticking at once would close a leader's check-quorum
// window before reading the followers' answers queued in its socket, and depose a healthy leader.
import { createConnection, createServer, type Server, type Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { type Message, MessageType } from '@flotilla/raft';
import { followerAnswers, manualNode, until } from './raft-node-fixtures.js';

const GROUP = 'late';
const TICK_MS = 100;

const answersTo = (sent: readonly Message[]): Message[] => followerAnswers(GROUP, sent);

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

/** A byte written now is read in the next poll phase: stands for the followers' answers arriving on a socket. */
async function socketPair(): Promise<{ server: Server; client: Socket; onData: (fn: () => void) => void }> {
  let handler: () => void = () => {};
  const server = createServer((s) => s.on('data', () => handler()));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as { port: number }).port;
  const client = createConnection(port, '127.0.0.1');
  await new Promise<void>((resolve) => client.once('connect', resolve));
  await new Promise((resolve) => setTimeout(resolve, 20));
  return { server, client, onData: (fn) => (handler = fn) };
}

function busyWait(ms: number): void {
  const until = performance.now() + ms;
  while (performance.now() < until) {
    // the event loop is stalled
  }
}

describe('RaftNode: a late tick', () => {
  it("runs after the answers that arrived during the leader's own stall: the leader is not deposed", async () => {
    const { node, sent, deliver, tick } = await manualNode({
      group: GROUP,
      tickMs: TICK_MS,
      // A window of two ticks, a heartbeat every tick.
      raft: { electionTicks: 2, heartbeatTicks: 1, preVote: false, checkQuorum: true },
    });
    const handler = (m: Message): void => deliver([m]);
    cleanups.push(() => node.stop());
    const io = await socketPair();
    cleanups.push(() => new Promise<void>((resolve) => (io.client.destroy(), io.server.close(() => resolve()))));

    node.campaign();
    await until(() => sent.some((m) => m.type === MessageType.Vote));
    for (const m of answersTo(sent.splice(0))) handler(m);
    await until(() => node.isLeader());
    await until(() => sent.some((m) => m.type === MessageType.Append));

    // The followers answer everything the leader sent, but their answers reach it only on the socket, read in
    // the poll phase. Tick 1 on time (heartbeats go out); then the leader's loop stalls past tick 2, the tick
    // that closes its quorum window.
    const held: Message[] = [];
    io.onData(() => {
      for (const m of held.splice(0)) handler(m);
    });
    await new Promise<void>((resolve) =>
      setTimeout(() => {
        tick();
        resolve();
      }, TICK_MS),
    );
    await new Promise((resolve) => setImmediate(resolve));
    held.push(...answersTo(sent.splice(0)));
    expect(held.some((m) => m.type === MessageType.HeartbeatResp)).toBe(true);
    await new Promise<void>((resolve) =>
      setTimeout(() => {
        io.client.write('x');
        busyWait(3 * TICK_MS);
        tick();
        resolve();
      }, 0),
    );
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(held).toHaveLength(0);
    expect(node.isLeader()).toBe(true);
  });
});
