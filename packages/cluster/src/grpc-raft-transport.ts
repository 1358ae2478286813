// @flotilla/raft's Transport over the cluster links: every group's messages share the one stream per peer
// and its per-turn batches; messages to unlinked nodes are dropped (Raft retransmits).
import type { Message, MessageHandler, NodeId, Transport } from '@flotilla/raft';
import type { ClusterNode } from './cluster-node.js';
import { raftFromWire, raftToWire } from './raft-wire.js';
import type { RaftMessageWire } from './wire.js';

export class GrpcRaftTransport implements Transport {
  private readonly handlers = new Map<string, MessageHandler>();
  /** Messages addressed to a node id nobody here listens on; for tests and monitoring. */
  undeliverable = 0;
  /** Messages for an unlinked peer, dropped. */
  unsent = 0;

  constructor(private readonly node: ClusterNode) {
    node.onRaft = (wire: RaftMessageWire) => this.receive(wire);
  }

  send(messages: readonly Message[]): void {
    for (const m of messages) {
      if (m.to === this.node.raftNodeId) {
        // A group member on this same node: no wire, but still asynchronous like the network.
        const handler = this.handlers.get(handlerKey(m.group, m.to));
        if (handler !== undefined) queueMicrotask(() => handler(m));
        continue;
      }
      if (!this.node.sendRaft(m.to, raftToWire(m))) this.unsent++;
    }
  }

  listen(group: string, nodeId: NodeId, handler: MessageHandler): () => void {
    const key = handlerKey(group, nodeId);
    this.handlers.set(key, handler);
    return () => {
      if (this.handlers.get(key) === handler) this.handlers.delete(key);
    };
  }

  private receive(wire: RaftMessageWire): void {
    const m = raftFromWire(wire);
    if (m === null) return;
    const handler = this.handlers.get(handlerKey(m.group, m.to));
    if (handler === undefined) {
      this.undeliverable++;
      return;
    }
    handler(m);
  }
}

function handlerKey(group: string, nodeId: NodeId): string {
  return `${group}\u0000${nodeId}`;
}
