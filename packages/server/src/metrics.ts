// Prometheus metrics for /metrics. Values are read from the server's counters at scrape time (collect
// callbacks), so the per-message path pays nothing for them. Series per stream, consumer, Raft group and
// peer are bounded by caps (see README "Metrics"); none are per connection or subject. Per account: the
// configured accounts' connections, and the JetStream series carry an `account` label.
import { Counter, Gauge, Registry, collectDefaultMetrics } from 'prom-client';
import type { FlotillaServer } from './server.js';
import { formatConstLabels, type TextFamily } from './exposition-text.js';
import { jetStreamsByAccount } from './monitored-jetstreams.js';

export interface MetricsRegistry {
  registry: Registry;
  /** One scrape: every snapshot is taken afresh, then shared by that scrape's collect callbacks. */
  scrape(): Promise<string>;
  /** Removes process-wide hooks and internal subscriptions. */
  stop(): void;
}

/** What a group of series registers: its directly written families, how to drop its per-scrape snapshot, how to stop. */
export interface SeriesFamily {
  texts: TextFamily[];
  newScrape(): void;
  stop(): void;
}

export async function createMetricsRegistry(server: FlotillaServer): Promise<MetricsRegistry> {
  const registry = new Registry();
  // `cluster` on every series (empty without a cluster) so one Grafana variable selects a cluster's nodes.
  const defaultLabels = { server_name: server.serverName, cluster: server.cluster?.node.clusterName ?? '' };
  registry.setDefaultLabels(defaultLabels);
  const constLabels = formatConstLabels(defaultLabels);
  // prom-client's process_* and nodejs_* families under their standard names, as stock Node.js dashboards expect.
  collectDefaultMetrics({ register: registry });
  registerCoreMetrics(registry, server);
  const families: SeriesFamily[] = [];
  // JetStream and cluster series load only where they exist, so a core-only node does not load the stores.
  const jetStreams = jetStreamsByAccount(server).map((a) => ({ ...a, router: server.accounts.named(a.account).router }));
  if (jetStreams.length > 0) {
    const { registerJetStreamMetrics } = await import('./jetstream-metrics.js');
    const o = server.options.jetstream;
    const limits = () => server.jetStreamLimits ?? { memoryBytes: o.maxMemoryStoreBytes, fileBytes: o.maxFileStoreBytes };
    families.push(registerJetStreamMetrics(registry, jetStreams, limits));
  }
  if (server.jetstream !== null || server.cluster !== null) {
    const { registerClusterMetrics } = await import('./cluster-metrics.js');
    families.push(registerClusterMetrics(registry, server));
  }
  return {
    registry,
    scrape: async () => {
      for (const f of families) f.newScrape();
      let text = await registry.metrics();
      for (const f of families) for (const t of f.texts) text += t.render(constLabels);
      return text;
    },
    stop: () => families.forEach((f) => f.stop()),
  };
}

function registerCoreMetrics(registry: Registry, server: FlotillaServer): void {
  // Monotonic counters that already live in the server: expose their current totals at scrape time.
  const counter = (name: string, help: string, read: () => number): void => {
    new Counter({
      name,
      help,
      registers: [registry],
      collect() {
        this.reset();
        this.inc(read());
      },
    });
  };
  const gauge = (name: string, help: string, read: () => number): void => {
    new Gauge({
      name,
      help,
      registers: [registry],
      collect() {
        this.set(read());
      },
    });
  };

  gauge('flotilla_client_connections', 'Client connections currently open.', () => server.clients.size);
  new Gauge({
    name: 'flotilla_account_client_connections',
    help: 'Client connections currently open, by account (one series per account of the config).',
    labelNames: ['account'],
    registers: [registry],
    collect() {
      const open = new Map<string, number>();
      for (const a of server.accounts.all()) open.set(a.name, 0);
      for (const c of server.clients.values()) open.set(c.account, (open.get(c.account) ?? 0) + 1);
      for (const [account, n] of open) this.set({ account }, n);
    },
  });
  counter('flotilla_client_connections_total', 'Client connections accepted since start.', () => server.totalConnections);
  counter('flotilla_slow_consumers_total', 'Connections closed for exceeding max_pending.', () => server.slowConsumers);
  gauge('flotilla_subscriptions', 'Subscriptions in the routing table (client and internal).', () => server.accounts.subscriptionCount());
  counter('flotilla_messages_received_total', 'Messages published into this server.', () => server.accounts.totals().inMsgs);
  counter('flotilla_messages_sent_total', 'Messages delivered to subscriptions.', () => server.accounts.totals().outMsgs);
  counter('flotilla_received_bytes_total', 'Payload bytes (headers included) published into this server.', () => server.accounts.totals().inBytes);
  counter('flotilla_sent_bytes_total', 'Payload bytes (headers included) delivered to subscriptions.', () => server.accounts.totals().outBytes);
  gauge('flotilla_uptime_seconds', 'Seconds since the server started.', () => (Date.now() - server.startMs) / 1000);
}
