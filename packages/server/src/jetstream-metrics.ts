// JetStream series for /metrics: per stream and per consumer state, API requests by operation, each with
// the account it belongs to (`$G` without accounts). Read at scrape time; streams and consumers exported
// are capped over all accounts (by account, then name order) so a node with very many streams cannot blow
// up the scrape — what was left out is counted in flotilla_metrics_series_omitted.
import { Counter, Gauge, type Registry } from 'prom-client';
import { damageTotals } from '@flotilla/store';
import type { MessageRouter } from './message-router.js';
import type { AccountJetStream } from './monitored-jetstreams.js';
import { InternalBus } from './internal-bus.js';
import { apiOperationOf, apiOperationOfResponseType } from './jetstream-api-operation.js';
import type { SeriesFamily } from './metrics.js';
import { textFamily, type TextFamily } from './exposition-text.js';

/** At most this many streams get per-stream series. */
export const MAX_STREAMS_EXPORTED = 500;
/** At most this many consumers (over all streams) get per-consumer series. */
export const MAX_CONSUMERS_EXPORTED = 2000;

/** An account's JetStream with the router its `$JS.API` requests travel (the account's own). */
export interface MeteredJetStream extends AccountJetStream {
  readonly router: MessageRouter;
}

interface ConsumerRow {
  account: string;
  stream: string;
  consumer: string;
  numPending: number;
  numAckPending: number;
  numRedelivered: number;
  numWaiting: number;
  deliveredStreamSeq: number;
  deliveredConsumerSeq: number;
  ackFloorStreamSeq: number;
  ackFloorConsumerSeq: number;
}

interface StreamRow {
  account: string;
  stream: string;
  messages: number;
  bytes: number;
  firstSeq: number;
  lastSeq: number;
  consumers: number;
}

interface Snapshot {
  streams: StreamRow[];
  consumers: ConsumerRow[];
  streamsTotal: number;
  consumersTotal: number;
}

/** Registers the JetStream series (stop removes the API observer). */
export function registerJetStreamMetrics(registry: Registry, all: readonly MeteredJetStream[]): SeriesFamily {
  // One snapshot per scrape, shared by every collect callback of that scrape.
  let cached: Snapshot | null = null;
  const snapshot = (): Snapshot => (cached ??= takeSnapshot(all));
  const texts: TextFamily[] = [];
  const streamGauge = (name: string, help: string, read: (r: StreamRow) => number): void => {
    texts.push(textFamily(name, help, 'gauge', (emit) => {
      for (const r of snapshot().streams) emit({ account: r.account, stream: r.stream }, read(r));
    }));
  };
  const consumerGauge = (name: string, help: string, read: (r: ConsumerRow) => number): void => {
    texts.push(textFamily(name, help, 'gauge', (emit) => {
      for (const r of snapshot().consumers) emit({ account: r.account, stream: r.stream, consumer: r.consumer }, read(r));
    }));
  };

  new Gauge({
    name: 'flotilla_jetstream_streams',
    help: 'Streams on this node (replicas included).',
    registers: [registry],
    collect() {
      this.set(snapshot().streamsTotal);
    },
  });
  new Gauge({
    name: 'flotilla_jetstream_consumers',
    help: 'Consumers running on this node.',
    registers: [registry],
    collect() {
      this.set(snapshot().consumersTotal);
    },
  });
  new Gauge({
    name: 'flotilla_metrics_series_omitted',
    help: `Streams or consumers left out of the per-stream/per-consumer series (caps: ${MAX_STREAMS_EXPORTED} streams, ${MAX_CONSUMERS_EXPORTED} consumers).`,
    labelNames: ['kind'],
    registers: [registry],
    collect() {
      const s = snapshot();
      this.set({ kind: 'stream' }, s.streamsTotal - s.streams.length);
      this.set({ kind: 'consumer' }, s.consumersTotal - s.consumers.length);
    },
  });
  streamGauge('flotilla_stream_messages', 'Messages stored in the stream.', (r) => r.messages);
  streamGauge('flotilla_stream_bytes', 'Bytes stored in the stream.', (r) => r.bytes);
  streamGauge('flotilla_stream_first_seq', 'First sequence in the stream.', (r) => r.firstSeq);
  streamGauge('flotilla_stream_last_seq', 'Last sequence in the stream.', (r) => r.lastSeq);
  streamGauge('flotilla_stream_consumers', 'Consumers of the stream running on this node.', (r) => r.consumers);
  consumerGauge('flotilla_consumer_num_pending', 'Messages matching the consumer not yet delivered.', (r) => r.numPending);
  consumerGauge('flotilla_consumer_num_ack_pending', 'Delivered messages awaiting an ack.', (r) => r.numAckPending);
  consumerGauge('flotilla_consumer_num_redelivered', 'Messages delivered more than once and not yet acked.', (r) => r.numRedelivered);
  consumerGauge('flotilla_consumer_num_waiting', 'Pull requests waiting.', (r) => r.numWaiting);
  consumerGauge('flotilla_consumer_delivered_stream_seq', 'Stream sequence of the last delivered message.', (r) => r.deliveredStreamSeq);
  consumerGauge('flotilla_consumer_delivered_consumer_seq', 'Consumer sequence of the last delivery.', (r) => r.deliveredConsumerSeq);
  consumerGauge('flotilla_consumer_ack_floor_stream_seq', 'Stream sequence below which every message is acked.', (r) => r.ackFloorStreamSeq);
  consumerGauge('flotilla_consumer_ack_floor_consumer_seq', 'Consumer sequence below which every delivery is acked.', (r) => r.ackFloorConsumerSeq);

  new Counter({
    name: 'flotilla_store_damaged_runs_total',
    help: 'Damaged runs of bytes found in stream store files since start (their records are lost unless repaired from a replica).',
    registers: [registry],
    collect() {
      this.reset();
      this.inc(damageTotals().regions);
    },
  });
  new Counter({
    name: 'flotilla_store_damaged_bytes_total',
    help: 'Bytes of those damaged runs.',
    registers: [registry],
    collect() {
      this.reset();
      this.inc(damageTotals().bytes);
    },
  });

  const errors = new Counter({
    name: 'flotilla_jetstream_api_errors_total',
    help: 'JetStream API requests this node answered with an error, by account, operation and JetStream error code.',
    labelNames: ['account', 'operation', 'err_code'],
    registers: [registry],
  });
  const requests = new Counter({
    name: 'flotilla_jetstream_api_requests_total',
    help: 'JetStream API requests published through this node, by account and operation (pull requests and direct gets included).',
    labelNames: ['account', 'operation'],
    registers: [registry],
  });
  const undo: Array<() => void> = [];
  for (const { account, js, router } of all) {
    js.apiErrorObserver = (type, errCode) => errors.inc({ account, operation: apiOperationOfResponseType(type), err_code: String(errCode) });
    // An internal subscription beside JetStream's own: it counts, and its delivery is taken back out of the
    // router's traffic totals so /varz out_msgs stays what clients and JetStream received.
    const stats = router.stats;
    const unsubscribe = new InternalBus(router).subscribe('$JS.API.>', (m) => {
      requests.inc({ account, operation: apiOperationOf(m.subject) });
      stats.outMsgs--;
      stats.outBytes -= (m.header?.length ?? 0) + m.data.length;
    });
    undo.push(() => {
      unsubscribe();
      js.apiErrorObserver = undefined;
    });
  }
  return {
    texts,
    newScrape: () => (cached = null),
    stop: () => undo.splice(0).forEach((u) => u()),
  };
}

function takeSnapshot(accounts: readonly AccountJetStream[]): Snapshot {
  const streams: StreamRow[] = [];
  const consumers: ConsumerRow[] = [];
  let streamsTotal = 0;
  let consumersTotal = 0;
  // Accounts come sorted by name (jetStreamsByAccount), so the caps keep a stable prefix.
  for (const { account, js } of accounts) {
    const all = [...js.streams()].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    streamsTotal += all.length;
    for (const s of all) {
      const list = js.consumers.consumersOf(s.name);
      consumersTotal += list.length;
      if (streams.length >= MAX_STREAMS_EXPORTED) continue;
      const st = s.store.state();
      streams.push({ account, stream: s.name, messages: st.messages, bytes: st.bytes, firstSeq: st.first_seq, lastSeq: st.last_seq, consumers: list.length });
      for (const c of list) {
        if (consumers.length >= MAX_CONSUMERS_EXPORTED) break;
        const info = c.info() as {
          num_pending: number;
          num_ack_pending: number;
          num_redelivered: number;
          num_waiting: number;
          delivered: { stream_seq: number; consumer_seq: number };
          ack_floor: { stream_seq: number; consumer_seq: number };
        };
        consumers.push({
          account,
          stream: s.name,
          consumer: c.name,
          numPending: info.num_pending,
          numAckPending: info.num_ack_pending,
          numRedelivered: info.num_redelivered,
          numWaiting: info.num_waiting,
          deliveredStreamSeq: info.delivered.stream_seq,
          deliveredConsumerSeq: info.delivered.consumer_seq,
          ackFloorStreamSeq: info.ack_floor.stream_seq,
          ackFloorConsumerSeq: info.ack_floor.consumer_seq,
        });
      }
    }
  }
  return { streams, consumers, streamsTotal, consumersTotal };
}
