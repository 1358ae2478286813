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
  /** Wall-clock ms of the last delivery / the last ack; 0 when none yet. */
  lastDeliveredMs: number;
  lastAckedMs: number;
}

interface StreamRow {
  account: string;
  stream: string;
  messages: number;
  bytes: number;
  firstSeq: number;
  lastSeq: number;
  consumers: number;
  subjects: number;
  storage: 'file' | 'memory';
  /** The stream's limits (-1: unlimited, as its config). */
  maxBytes: number;
  maxMsgs: number;
  maxMsgsPerSubject: number;
  maxAgeSeconds: number;
}

interface Snapshot {
  streams: StreamRow[];
  consumers: ConsumerRow[];
  streamsTotal: number;
  consumersTotal: number;
}

/** The server's JetStream limits (`/varz jetstream.config` max_memory / max_storage), in bytes. */
export interface ServerStorageLimits {
  memoryBytes: number;
  fileBytes: number;
}

/** Registers the JetStream series (stop removes the API and advisory observers). */
export function registerJetStreamMetrics(registry: Registry, all: readonly MeteredJetStream[], serverLimits: () => ServerStorageLimits): SeriesFamily {
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
  streamGauge('flotilla_stream_subjects', 'Distinct subjects with messages in the stream.', (r) => r.subjects);
  streamGauge('flotilla_stream_max_bytes', 'The stream\'s max_bytes limit (-1: unlimited).', (r) => r.maxBytes);
  streamGauge('flotilla_stream_max_msgs', 'The stream\'s max_msgs limit (-1: unlimited).', (r) => r.maxMsgs);
  streamGauge('flotilla_stream_max_msgs_per_subject', 'The stream\'s max_msgs_per_subject limit (-1: unlimited).', (r) => r.maxMsgsPerSubject);
  streamGauge('flotilla_stream_max_age_seconds', 'The stream\'s max_age (0: unlimited).', (r) => r.maxAgeSeconds);
  consumerGauge('flotilla_consumer_num_pending', 'Messages matching the consumer not yet delivered.', (r) => r.numPending);
  consumerGauge('flotilla_consumer_num_ack_pending', 'Delivered messages awaiting an ack.', (r) => r.numAckPending);
  consumerGauge('flotilla_consumer_num_redelivered', 'Messages delivered more than once and not yet acked.', (r) => r.numRedelivered);
  consumerGauge('flotilla_consumer_num_waiting', 'Pull requests waiting.', (r) => r.numWaiting);
  consumerGauge('flotilla_consumer_delivered_stream_seq', 'Stream sequence of the last delivered message.', (r) => r.deliveredStreamSeq);
  consumerGauge('flotilla_consumer_delivered_consumer_seq', 'Consumer sequence of the last delivery.', (r) => r.deliveredConsumerSeq);
  consumerGauge('flotilla_consumer_ack_floor_stream_seq', 'Stream sequence below which every message is acked.', (r) => r.ackFloorStreamSeq);
  consumerGauge('flotilla_consumer_ack_floor_consumer_seq', 'Consumer sequence below which every delivery is acked.', (r) => r.ackFloorConsumerSeq);
  // Ages rather than timestamps so an alert reads `> 300`; -1 while nothing was delivered / acked yet.
  const nowMs = (): number => Date.now();
  consumerGauge('flotilla_consumer_last_delivery_age_seconds', 'Seconds since the consumer last delivered a message (-1: never).', (r) =>
    r.lastDeliveredMs > 0 ? Math.max(0, nowMs() - r.lastDeliveredMs) / 1000 : -1,
  );
  consumerGauge('flotilla_consumer_last_ack_age_seconds', 'Seconds since the consumer last received an ack (-1: never).', (r) =>
    r.lastAckedMs > 0 ? Math.max(0, nowMs() - r.lastAckedMs) / 1000 : -1,
  );

  // Storage used vs limit: the server's (this node's streams over every account), each account's.
  new Gauge({
    name: 'flotilla_jetstream_storage_used_bytes',
    help: 'Bytes stored by this node\'s streams, by storage type (file, memory), over every account.',
    labelNames: ['type'],
    registers: [registry],
    collect() {
      const used = { file: 0, memory: 0 };
      for (const { js } of all) {
        const u = usageOf(js);
        used.file += u.storage;
        used.memory += u.memory;
      }
      this.set({ type: 'file' }, used.file);
      this.set({ type: 'memory' }, used.memory);
    },
  });
  new Gauge({
    name: 'flotilla_jetstream_storage_limit_bytes',
    help: 'The server\'s JetStream limit by storage type (max_file_store, max_memory_store).',
    labelNames: ['type'],
    registers: [registry],
    collect() {
      const l = serverLimits();
      this.set({ type: 'file' }, l.fileBytes);
      this.set({ type: 'memory' }, l.memoryBytes);
    },
  });
  new Gauge({
    name: 'flotilla_account_storage_used_bytes',
    help: 'Bytes the account stores, by storage type (in a cluster with accounts: on every node, as /jsz).',
    labelNames: ['account', 'type'],
    registers: [registry],
    collect() {
      for (const { account, js } of all) {
        const u = js.usageOnEveryNode() ?? usageOf(js);
        this.set({ account, type: 'file' }, u.storage);
        this.set({ account, type: 'memory' }, u.memory);
      }
    },
  });
  new Gauge({
    name: 'flotilla_account_storage_limit_bytes',
    help: 'The account\'s JetStream limit by storage type (-1: unlimited, bounded by the server\'s).',
    labelNames: ['account', 'type'],
    registers: [registry],
    collect() {
      for (const { account, js } of all) {
        const l = js.accountLimits.limits;
        this.set({ account, type: 'file' }, l.max_storage);
        this.set({ account, type: 'memory' }, l.max_memory);
      }
    },
  });

  // Advisories and metric events by kind (`STREAM.LEADER_ELECTED`, `CONSUMER.MAX_DELIVERIES`, …): counted where
  // they arise, listened to or not. The kind is the subject without its stream/consumer tokens: a fixed set.
  const advisories = new Counter({
    name: 'flotilla_jetstream_advisories_total',
    help: 'JetStream advisories and metric events raised on this node, by account and kind (the API audit is flotilla_jetstream_api_requests_total).',
    labelNames: ['account', 'kind'],
    registers: [registry],
  });

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
    js.advisoryObserver = (kind) => advisories.inc({ account, kind });
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
      js.advisoryObserver = undefined;
    });
  }
  return {
    texts,
    newScrape: () => (cached = null),
    stop: () => undo.splice(0).forEach((u) => u()),
  };
}

/** Bytes this node's streams of one account hold, by storage type. */
function usageOf(js: AccountJetStream['js']): { memory: number; storage: number } {
  const u = { memory: 0, storage: 0 };
  for (const s of js.streams()) {
    const bytes = s.store.state().bytes;
    if (s.config.storage === 'memory') u.memory += bytes;
    else u.storage += bytes;
  }
  return u;
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
      const cfg = s.config;
      streams.push({
        account,
        stream: s.name,
        messages: st.messages,
        bytes: st.bytes,
        firstSeq: st.first_seq,
        lastSeq: st.last_seq,
        consumers: list.length,
        subjects: st.num_subjects,
        storage: cfg.storage === 'memory' ? 'memory' : 'file',
        maxBytes: cfg.max_bytes ?? -1,
        maxMsgs: cfg.max_msgs ?? -1,
        maxMsgsPerSubject: cfg.max_msgs_per_subject ?? -1,
        maxAgeSeconds: (cfg.max_age ?? 0) / 1e9,
      });
      for (const c of list) {
        if (consumers.length >= MAX_CONSUMERS_EXPORTED) break;
        const info = c.info() as {
          num_pending: number;
          num_ack_pending: number;
          num_redelivered: number;
          num_waiting: number;
          delivered: { stream_seq: number; consumer_seq: number; last_active?: string };
          ack_floor: { stream_seq: number; consumer_seq: number; last_active?: string };
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
          lastDeliveredMs: info.delivered.last_active !== undefined ? Date.parse(info.delivered.last_active) : 0,
          lastAckedMs: info.ack_floor.last_active !== undefined ? Date.parse(info.ack_floor.last_active) : 0,
        });
      }
    }
  }
  return { streams, consumers, streamsTotal, consumersTotal };
}
