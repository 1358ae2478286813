// ConsumerInfo of a consumer that does not run on this node (a stream follower), from the config and state
// this node last applied from the stream's Raft log: nats-server's followers list their consumers in /jsz
// the same way (their consumer objects hold the replicated state). `num_pending` is counted in this node's
// copy of the stream from the replicated delivered sequence; `num_waiting` is 0 (pull requests wait on the leader).
import type { StreamHandle } from '../stream/stream-handle.js';
import { consumerFilters, orderedConfig } from './consumer-config.js';
import type { ConsumerMeta } from './consumer-state-placement.js';
import type { ConsumerStateSnapshot } from './consumer-state.js';

export interface StoredConsumer {
  meta: ConsumerMeta;
  /** null until the leader replicated the consumer's first state */
  state: ConsumerStateSnapshot | null;
}

export function followerConsumerInfo(stream: StreamHandle, c: StoredConsumer, cluster: object | undefined): Record<string, unknown> {
  const st = c.state ?? { delivered: { consumer_seq: 0, stream_seq: 0 }, ack_floor: { consumer_seq: 0, stream_seq: 0 }, pending: [], redelivered: [] };
  const from = st.delivered.stream_seq + 1;
  const filters = consumerFilters(c.meta.config);
  let numPending = 0;
  for (const f of filters.length > 0 ? filters : ['']) numPending += stream.store.filteredState(f, from).msgs;
  const out: Record<string, unknown> = {
    stream_name: c.meta.stream_name,
    name: c.meta.name,
    created: c.meta.created,
    config: orderedConfig(c.meta.config),
    delivered: { consumer_seq: st.delivered.consumer_seq, stream_seq: st.delivered.stream_seq },
    ack_floor: { consumer_seq: st.ack_floor.consumer_seq, stream_seq: st.ack_floor.stream_seq },
    num_ack_pending: st.pending.length,
    num_redelivered: st.redelivered.length,
    num_waiting: 0,
    num_pending: numPending,
  };
  if (cluster !== undefined) out['cluster'] = cluster;
  out['ts'] = new Date().toISOString();
  return out;
}
