import type { Message, NodeId } from './types.js';

export type MessageHandler = (message: Message) => void;

/** How a RaftNode reaches its peers. The clustering layer supplies a gRPC implementation. */
export interface Transport {
  send(messages: readonly Message[]): void;
  /** Deliver messages addressed to (group, nodeId) to `handler`; returns a function that stops delivery. */
  listen(group: string, nodeId: NodeId, handler: MessageHandler): () => void;
}

/** Delivers messages between RaftNodes in one process, asynchronously and in batches. */
export class InMemoryNetwork {
  private readonly handlers = new Map<string, MessageHandler>();
  private queue: Message[] = [];
  private scheduled = false;
  private readonly cut = new Set<string>();
  delivered = 0;
  /** Messages beyond this many undelivered ones are dropped (Raft tolerates loss). */
  constructor(private readonly maxQueuedMessages = 1_000_000) {}

  transport(): Transport {
    return {
      send: (messages) => this.enqueue(messages),
      listen: (group, nodeId, handler) => {
        const key = `${group}/${nodeId}`;
        this.handlers.set(key, handler);
        return () => {
          if (this.handlers.get(key) === handler) this.handlers.delete(key);
        };
      },
    };
  }

  /** Drop traffic between a and b (both directions) until heal(). */
  disconnect(a: NodeId, b: NodeId): void {
    this.cut.add(`${a}-${b}`).add(`${b}-${a}`);
  }

  isolate(id: NodeId, others: readonly NodeId[]): void {
    for (const o of others) if (o !== id) this.disconnect(id, o);
  }

  heal(): void {
    this.cut.clear();
  }

  private enqueue(messages: readonly Message[]): void {
    if (messages.length === 0) return;
    for (const m of messages) if (this.queue.length < this.maxQueuedMessages) this.queue.push(m);
    if (!this.scheduled) {
      this.scheduled = true;
      setImmediate(() => this.flush());
    }
  }

  private flush(): void {
    this.scheduled = false;
    const batch = this.queue;
    this.queue = [];
    for (const m of batch) {
      if (this.cut.has(`${m.from}-${m.to}`)) continue;
      const handler = this.handlers.get(`${m.group}/${m.to}`);
      if (handler) {
        this.delivered++;
        handler(m);
      }
    }
  }
}
