// Message-by-message test harness: cores wired by hand, Readies persisted instantly unless told otherwise.
import {
  type Entry,
  type Message,
  MessageType,
  type NodeId,
  RaftCore,
  type RaftOptions,
  type Ready,
  SeededRandom,
  emptyMessage,
} from '@flotilla/raft';

export function newCore(id: NodeId, peers: NodeId[], extra: Partial<RaftOptions> = {}): RaftCore {
  return new RaftCore({ id, peers, random: new SeededRandom(id * 97), electionTicks: 10, heartbeatTicks: 1, ...extra });
}

/** Persist and handle every pending Ready; returns all messages the node sent and the entries it applied. */
export function drain(core: RaftCore): { messages: Message[]; applied: Entry[]; readies: Ready[] } {
  const messages: Message[] = [];
  const applied: Entry[] = [];
  const readies: Ready[] = [];
  for (let i = 0; i < 20 && core.hasReady(); i++) {
    const ready = core.ready();
    readies.push(ready);
    messages.push(...ready.messages, ...ready.messagesAfterPersist);
    applied.push(...ready.committedEntries);
    core.advance(ready);
  }
  return { messages, applied, readies };
}

export function msg(type: Message['type'], from: NodeId, to: NodeId, term: number, fields: Partial<Message> = {}): Message {
  return { ...emptyMessage('', type, from, to, term), ...fields };
}

export function entry(index: number, term: number, text = ''): Entry {
  return { index, term, type: 0, data: new TextEncoder().encode(text) };
}

export class Cluster {
  readonly cores = new Map<NodeId, RaftCore>();
  /** Pairs that cannot talk, as "a-b" in both directions. */
  readonly cut = new Set<string>();
  readonly applied = new Map<NodeId, Entry[]>();

  constructor(ids: NodeId[], extra: Partial<RaftOptions> = {}) {
    for (const id of ids) this.add(newCore(id, ids, extra));
  }

  add(core: RaftCore): void {
    this.cores.set(core.id, core);
    this.applied.set(core.id, []);
  }

  get(id: NodeId): RaftCore {
    const c = this.cores.get(id);
    if (!c) throw new Error(`no node ${id}`);
    return c;
  }

  isolate(id: NodeId): void {
    for (const other of this.cores.keys()) if (other !== id) this.cut.add(`${id}-${other}`).add(`${other}-${id}`);
  }

  heal(): void {
    this.cut.clear();
  }

  /** Deliver messages until the cluster is quiet. Returns every message delivered. */
  settle(maxRounds = 200): Message[] {
    const log: Message[] = [];
    for (let round = 0; round < maxRounds; round++) {
      const outbox: Message[] = [];
      for (const core of this.cores.values()) {
        const { messages, applied } = drain(core);
        outbox.push(...messages);
        this.applied.get(core.id)!.push(...applied);
      }
      if (outbox.length === 0) return log;
      for (const m of outbox) {
        if (this.cut.has(`${m.from}-${m.to}`)) continue;
        const to = this.cores.get(m.to);
        if (!to) continue;
        log.push(m);
        to.step(m);
      }
    }
    return log;
  }

  tick(n: number): void {
    for (let i = 0; i < n; i++) {
      for (const core of this.cores.values()) core.tick();
      this.settle();
    }
  }

  elect(id: NodeId): void {
    this.get(id).campaignNow();
    this.settle();
  }

  leaders(): NodeId[] {
    return [...this.cores.values()].filter((c) => c.role === 'leader').map((c) => c.id);
  }
}

export const types = MessageType;
