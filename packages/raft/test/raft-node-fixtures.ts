// RaftNode test fixtures: state machines, nodes on an in-memory network, a cluster of them, and polling.
import {
  type Clock,
  type Entry,
  emptyMessage,
  InMemoryNetwork,
  MemoryLogStore,
  type Message,
  type MessageHandler,
  MessageType,
  type NodeId,
  RaftNode,
  type RaftNodeOptions,
  SnapshotNotHeldError,
  type StateMachine,
} from '@flotilla/raft';
import { untilEvery } from '../../../test/helpers/until.js';

/** Polls every 5 ms until the probe returns something truthy. */
export const until = untilEvery(5);

export const enc = new TextEncoder();
export const dec = new TextDecoder();
export const GROUP = 'g1';

export class ListMachine implements StateMachine {
  values: string[] = [];
  apply(entry: Entry): unknown {
    this.values.push(dec.decode(entry.data));
    return this.values.length;
  }
  snapshot(): Uint8Array {
    return enc.encode(JSON.stringify(this.values));
  }
  restore(data: Uint8Array): void {
    this.values = JSON.parse(dec.decode(data)) as string[];
  }
}

const STAND_IN = 'stand-in:';

/**
 * Like a file stream: durable state outside the Raft log (kept across a "restart" by reusing the object), a
 * stand-in compaction snapshot naming only how far the state reaches, and the complete image from fullSnapshot
 * (after `imageDelayMs`). Idempotent by index, as fullSnapshot requires: the image is newer than the snapshot
 * index it stands for. A fresh object restoring a stand-in is a replica whose files were lost: it throws
 * SnapshotNotHeldError.
 */
export class StandInMachine extends ListMachine {
  lastIndex = 0;
  fullImages = 0;
  standInsRestored = 0;
  notHeld = 0;
  constructor(private readonly imageDelayMs = 0) {
    super();
  }
  override apply(entry: Entry): unknown {
    if (entry.index <= this.lastIndex) return this.values.length;
    this.lastIndex = entry.index;
    return super.apply(entry);
  }
  override snapshot(): Uint8Array {
    return enc.encode(`${STAND_IN}${this.lastIndex}`);
  }
  async fullSnapshot(): Promise<Uint8Array> {
    this.fullImages++;
    const image = enc.encode(JSON.stringify({ lastIndex: this.lastIndex, values: this.values }));
    if (this.imageDelayMs > 0) await new Promise((r) => setTimeout(r, this.imageDelayMs));
    return image;
  }
  override restore(data: Uint8Array): void {
    const text = dec.decode(data);
    if (text.startsWith(STAND_IN)) {
      this.standInsRestored++;
      if (this.lastIndex >= Number(text.slice(STAND_IN.length))) return;
      this.notHeld++;
      throw new SnapshotNotHeldError();
    }
    const image = JSON.parse(text) as { lastIndex: number; values: string[] };
    this.lastIndex = image.lastIndex;
    this.values = image.values;
  }
}

export type NotHeld = { logDiscarded: boolean; snapshotIndex: number; lastIndex: number };

export interface NodeExtras {
  snapshotEveryEntries?: number;
  snapshotEveryBytes?: number;
  /** Collects every leader reported. */
  leaders?: NodeId[];
  /** Collects onSnapshotNotHeld reports. */
  notHeld?: NotHeld[];
}

const running: RaftNode[] = [];

/** A node started some other way, stopped by stopAllNodes too. */
export function trackNode(node: RaftNode): void {
  running.push(node);
}

/** For afterEach: stops every node started here and not stopped since. */
export async function stopAllNodes(): Promise<void> {
  await Promise.all(running.splice(0).map((n) => n.stop()));
}

export async function startNode(id: NodeId, peers: NodeId[], net: InMemoryNetwork, store: MemoryLogStore, sm: StateMachine, extra: NodeExtras = {}): Promise<RaftNode> {
  const node = await RaftNode.start({
    group: GROUP,
    id,
    peers,
    store,
    transport: net.transport(),
    stateMachine: sm,
    tickMs: 5,
    snapshotEveryEntries: extra.snapshotEveryEntries ?? 10_000,
    snapshotEveryBytes: extra.snapshotEveryBytes,
    raft: { electionTicks: 10 },
    onLeaderChange: (leader) => extra.leaders?.push(leader),
    onSnapshotNotHeld: (info) => extra.notHeld?.push(info),
  });
  running.push(node);
  return node;
}

export async function stopNode(node: RaftNode): Promise<void> {
  running.splice(running.indexOf(node), 1);
  await node.stop();
}

/** Nodes `ids` founding one group, each with its own store and machine, once one of them leads. */
export async function cluster<M extends StateMachine>(
  ids: NodeId[],
  makeMachine: () => M,
  opts: { snapshotEveryEntries?: number; snapshotEveryBytes?: number; net?: InMemoryNetwork } = {},
) {
  const net = opts.net ?? new InMemoryNetwork();
  const stores = new Map(ids.map((id) => [id, new MemoryLogStore()]));
  const machines = new Map(ids.map((id) => [id, makeMachine()]));
  const leaders: NodeId[] = [];
  const nodes = new Map<NodeId, RaftNode>();
  const extra = { snapshotEveryEntries: opts.snapshotEveryEntries, snapshotEveryBytes: opts.snapshotEveryBytes, leaders };
  for (const id of ids) nodes.set(id, await startNode(id, ids, net, stores.get(id)!, machines.get(id)!, extra));
  const leader = await until(() => [...nodes.values()].find((n) => n.isLeader()), 5000, 'a leader');
  return { net, ids, stores, machines, nodes, leader, leaders };
}

/** What two followers answer to a leader's messages: votes granted, appends and heartbeats accepted. */
export function followerAnswers(group: string, sent: readonly Message[]): Message[] {
  const out: Message[] = [];
  for (const m of sent) {
    if (m.type === MessageType.Vote) out.push(emptyMessage(group, MessageType.VoteResp, m.to, m.from, m.term));
    else if (m.type === MessageType.PreVote) out.push(emptyMessage(group, MessageType.PreVoteResp, m.to, m.from, m.term));
    else if (m.type === MessageType.Append) {
      const reply = emptyMessage(group, MessageType.AppendResp, m.to, m.from, m.term);
      reply.index = m.index + m.entries.length;
      out.push(reply);
    } else if (m.type === MessageType.Heartbeat) {
      const reply = emptyMessage(group, MessageType.HeartbeatResp, m.to, m.from, m.term);
      reply.context = m.context;
      out.push(reply);
    }
  }
  return out;
}

/**
 * Node 1 of [1, 2, 3] with a clock that ticks only when the test says and a transport that records what it
 * sends: the test plays the followers (`deliver`).
 */
export async function manualNode(
  options: Pick<RaftNodeOptions, 'group' | 'tickMs' | 'raft'>,
): Promise<{ node: RaftNode; sent: Message[]; deliver: (ms: readonly Message[]) => void; tick: () => void }> {
  let tick: () => void = () => {};
  const clock: Clock = {
    every(_ms, fn) {
      tick = fn;
      return () => {};
    },
  };
  let handler: MessageHandler = () => {};
  const sent: Message[] = [];
  const node = await RaftNode.start({
    ...options,
    id: 1,
    peers: [1, 2, 3],
    store: new MemoryLogStore(),
    transport: {
      send: (messages) => void sent.push(...messages),
      listen: (_group, _id, h) => {
        handler = h;
        return () => {};
      },
    },
    stateMachine: new ListMachine(),
    clock,
  });
  return { node, sent, deliver: (ms) => ms.forEach((m) => handler(m)), tick: () => tick() };
}
