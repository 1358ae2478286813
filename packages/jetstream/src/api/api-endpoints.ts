// Every `$JS.API` endpoint of nats-server 2.14 (server/jetstream_api.go's subjects; the stream templates of
// 2.9, which 2.10 removed, too), with the bounded operation label the metrics use, who answers it in a
// cluster, its response type and this node's handler. Requests are matched against the patterns in a
// Sublist, as nats-server's apiDispatch matches its js.apiSubs. A subject no pattern matches gets no
// answer, as nats-server 2.9 (2.10.14+ answers such a subject 400 10003 with type `system_response`;
// the end-to-end tests pin 2.9's silence, which they check against the installed nats-server 2.9.10).
import { Sublist } from '@flotilla/protocol';
import type { ConsumerApi } from '../consumer/consumer-api.js';
import type { BusMessage } from '../message-bus.js';
import { JsErrors } from './api-errors.js';
import type { StreamApi } from './stream-api.js';

const T = 'io.nats.jetstream.api.v1.';

/**
 * Who answers in a cluster, as nats-server: the meta leader (the catalogue), the stream's leader, or the
 * consumer's leader (ours is the stream's leader).
 */
export type EndpointScope = 'catalogue' | 'stream' | 'consumer';

/** How the cluster router treats a stream request: `info` may be answered by a member of a leaderless group; `pull` never gets an error reply. */
export type StreamOp = 'info' | 'pull' | 'stepdown' | 'other';

/** What this node's handlers answer from: its own streams and direct gets. */
export interface LocalApi {
  readonly streams: StreamApi;
  /** DIRECT.GET on a local stream; false (no answer) when the stream is not here or does not allow direct gets. */
  directGet(stream: string, t: readonly string[], msg: BusMessage): boolean;
  /** STREAM.SNAPSHOT / STREAM.RESTORE (backup/). */
  readonly backups?: {
    snapshot(stream: string, msg: BusMessage): Promise<void>;
    restore(stream: string, msg: BusMessage): Promise<void>;
  };
}

/** `t`: the subject's tokens after `$JS.API` (or `$JS.<domain>.API`); false = no answer from this node. */
type LocalHandler = (api: LocalApi, t: readonly string[], msg: BusMessage) => boolean;
type ConsumerHandler = (api: ConsumerApi, t: readonly string[], msg: BusMessage) => boolean;

interface EndpointFacts {
  /** nats-server's subject after `$JS.API.`, e.g. `STREAM.INFO.*`. */
  readonly pattern: string;
  /** The bounded label of the metrics, e.g. `STREAM.INFO` (the pattern's literal tokens). */
  readonly operation: string;
  /** `io.nats.jetstream.api.v1.…_response` (DIRECT.GET answers with status messages: its type only labels). */
  readonly responseType: string;
  /** The stream name's index among the tokens after `$JS.API` (stream and consumer endpoints). */
  readonly streamToken?: number;
  /** Default `other`. */
  readonly streamOp?: StreamOp;
  /** False: Flotilla does not serve it yet and refuses it by name (in a cluster the meta leader does, so once). */
  readonly implemented: boolean;
  /** nats-server serves it only in a cluster; a single node answers 10010. */
  readonly clusterOnly?: true;
  /** Pull requests and direct gets, which nats-server serves outside its API statistics. */
  readonly outsideApiStats?: true;
}

/**
 * `serve`: this node's handler — every endpoint's on a single node (absent: no answer there), and in a cluster
 * the stream leader's for stream and consumer endpoints (the catalogue's are the meta group's, in cluster/).
 */
export type ApiEndpoint =
  | (EndpointFacts & { readonly scope: 'catalogue' | 'stream'; readonly serve?: LocalHandler })
  | (EndpointFacts & { readonly scope: 'consumer'; readonly serve?: ConsumerHandler });

/** Handlers answer asynchronously; the request counts as answered. */
function answered(_pending: Promise<void>): true {
  return true;
}

const stream = (t: readonly string[]): string => t[2]!;
const STREAM_STEPDOWN = `${T}stream_leader_stepdown_response`;
const streamNotFound = (): never => {
  throw JsErrors.streamNotFound();
};

export const API_ENDPOINTS: readonly ApiEndpoint[] = [
  // The catalogue (the meta leader in a cluster).
  { pattern: 'INFO', operation: 'INFO', scope: 'catalogue', responseType: `${T}account_info_response`, implemented: true, serve: (a, _t, m) => answered(a.streams.accountInfo(m)) },
  { pattern: 'STREAM.CREATE.*', operation: 'STREAM.CREATE', scope: 'catalogue', responseType: `${T}stream_create_response`, implemented: true, serve: (a, t, m) => answered(a.streams.create(stream(t), m)) },
  { pattern: 'STREAM.UPDATE.*', operation: 'STREAM.UPDATE', scope: 'catalogue', responseType: `${T}stream_update_response`, implemented: true, serve: (a, t, m) => answered(a.streams.update(stream(t), m)) },
  { pattern: 'STREAM.DELETE.*', operation: 'STREAM.DELETE', scope: 'catalogue', responseType: `${T}stream_delete_response`, implemented: true, serve: (a, t, m) => answered(a.streams.delete(stream(t), m)) },
  { pattern: 'STREAM.NAMES', operation: 'STREAM.NAMES', scope: 'catalogue', responseType: `${T}stream_names_response`, implemented: true, serve: (a, _t, m) => answered(a.streams.names(m)) },
  { pattern: 'STREAM.LIST', operation: 'STREAM.LIST', scope: 'catalogue', responseType: `${T}stream_list_response`, implemented: true, serve: (a, _t, m) => answered(a.streams.list(m)) },
  // nats-server's meta leader removes a stream's peer: it changes the assignment.
  { pattern: 'STREAM.PEER.REMOVE.*', operation: 'STREAM.PEER.REMOVE', scope: 'catalogue', responseType: `${T}stream_remove_peer_response`, implemented: true, clusterOnly: true, serve: (a, t, m) => answered(a.streams.removePeer(t[3] ?? '', m)) },
  // System account, cluster only; nats-server subscribes it only in a cluster, so one node does not answer.
  { pattern: 'META.LEADER.STEPDOWN', operation: 'META.LEADER.STEPDOWN', scope: 'catalogue', responseType: `${T}meta_leader_stepdown_response`, implemented: true },
  { pattern: 'SERVER.REMOVE', operation: 'SERVER.REMOVE', scope: 'catalogue', responseType: `${T}meta_server_remove_response`, implemented: true, clusterOnly: true },
  { pattern: 'ACCOUNT.PURGE.*', operation: 'ACCOUNT.PURGE', scope: 'catalogue', responseType: `${T}account_purge_response`, implemented: false },
  // nats-server answers a move and its cancellation with a stream update response.
  { pattern: 'ACCOUNT.STREAM.MOVE.*.*', operation: 'ACCOUNT.STREAM.MOVE', scope: 'catalogue', responseType: `${T}stream_update_response`, implemented: true, clusterOnly: true },
  { pattern: 'ACCOUNT.STREAM.CANCEL_MOVE.*.*', operation: 'ACCOUNT.STREAM.CANCEL_MOVE', scope: 'catalogue', responseType: `${T}stream_update_response`, implemented: true, clusterOnly: true },
  // Stream templates: served by 2.9 (the reference server here), removed in 2.10.
  { pattern: 'STREAM.TEMPLATE.CREATE.*', operation: 'STREAM.TEMPLATE.CREATE', scope: 'catalogue', responseType: `${T}stream_template_create_response`, implemented: false },
  { pattern: 'STREAM.TEMPLATE.NAMES', operation: 'STREAM.TEMPLATE.NAMES', scope: 'catalogue', responseType: `${T}stream_template_names_response`, implemented: false },
  { pattern: 'STREAM.TEMPLATE.INFO.*', operation: 'STREAM.TEMPLATE.INFO', scope: 'catalogue', responseType: `${T}stream_template_info_response`, implemented: false },
  { pattern: 'STREAM.TEMPLATE.DELETE.*', operation: 'STREAM.TEMPLATE.DELETE', scope: 'catalogue', responseType: `${T}stream_template_delete_response`, implemented: false },

  // One stream (its leader in a cluster).
  { pattern: 'STREAM.INFO.*', operation: 'STREAM.INFO', scope: 'stream', streamToken: 2, streamOp: 'info', responseType: `${T}stream_info_response`, implemented: true, serve: (a, t, m) => answered(a.streams.streamInfo(stream(t), m)) },
  { pattern: 'STREAM.PURGE.*', operation: 'STREAM.PURGE', scope: 'stream', streamToken: 2, responseType: `${T}stream_purge_response`, implemented: true, serve: (a, t, m) => answered(a.streams.purge(stream(t), m)) },
  { pattern: 'STREAM.MSG.GET.*', operation: 'STREAM.MSG.GET', scope: 'stream', streamToken: 3, responseType: `${T}stream_msg_get_response`, implemented: true, serve: (a, t, m) => answered(a.streams.msgGet(t[3]!, m)) },
  { pattern: 'STREAM.MSG.DELETE.*', operation: 'STREAM.MSG.DELETE', scope: 'stream', streamToken: 3, responseType: `${T}stream_msg_delete_response`, implemented: true, serve: (a, t, m) => answered(a.streams.msgDelete(t[3]!, m)) },
  // A stream leader steps down through the cluster layer; this handler runs where the catalogue has no such stream.
  { pattern: 'STREAM.LEADER.STEPDOWN.*', operation: 'STREAM.LEADER.STEPDOWN', scope: 'stream', streamToken: 3, streamOp: 'stepdown', responseType: STREAM_STEPDOWN, implemented: true, clusterOnly: true, serve: (a, _t, m) => answered(a.streams.run(STREAM_STEPDOWN, m.reply, streamNotFound)) },
  { pattern: 'STREAM.SNAPSHOT.*', operation: 'STREAM.SNAPSHOT', scope: 'stream', streamToken: 2, responseType: `${T}stream_snapshot_response`, implemented: true, serve: (a, t, m) => (a.backups ? answered(a.backups.snapshot(stream(t), m)) : false) },
  // nats-server's meta leader answers a restore (it creates the stream); a cluster refuses it there by name for now.
  { pattern: 'STREAM.RESTORE.*', operation: 'STREAM.RESTORE', scope: 'catalogue', responseType: `${T}stream_restore_response`, implemented: true, serve: (a, t, m) => (a.backups ? answered(a.backups.restore(stream(t), m)) : false) },
  // The stored message itself; none when the stream is not here or does not allow direct gets (nats-server's stream subscribes only then).
  { pattern: 'DIRECT.GET.*', operation: 'DIRECT.GET', scope: 'stream', streamToken: 2, streamOp: 'pull', responseType: `${T}stream_msg_get_response`, implemented: true, outsideApiStats: true, serve: (a, t, m) => a.directGet(stream(t), t, m) },
  { pattern: 'DIRECT.GET.*.>', operation: 'DIRECT.GET', scope: 'stream', streamToken: 2, streamOp: 'pull', responseType: `${T}stream_msg_get_response`, implemented: true, outsideApiStats: true, serve: (a, t, m) => a.directGet(stream(t), t, m) },

  // One consumer (ours lead with their stream).
  { pattern: 'CONSUMER.CREATE.*', operation: 'CONSUMER.CREATE', scope: 'consumer', streamToken: 2, responseType: `${T}consumer_create_response`, implemented: true, serve: (c, t, m) => c.create('legacyEphemeral', t, m) },
  { pattern: 'CONSUMER.CREATE.*.>', operation: 'CONSUMER.CREATE', scope: 'consumer', streamToken: 2, responseType: `${T}consumer_create_response`, implemented: true, serve: (c, t, m) => c.create('named', t, m) },
  { pattern: 'CONSUMER.DURABLE.CREATE.*.*', operation: 'CONSUMER.DURABLE.CREATE', scope: 'consumer', streamToken: 3, responseType: `${T}consumer_create_response`, implemented: true, serve: (c, t, m) => c.create('legacyDurable', t, m) },
  { pattern: 'CONSUMER.INFO.*.*', operation: 'CONSUMER.INFO', scope: 'consumer', streamToken: 2, responseType: `${T}consumer_info_response`, implemented: true, serve: (c, t, m) => c.info(t[2]!, t[3]!, m) },
  { pattern: 'CONSUMER.DELETE.*.*', operation: 'CONSUMER.DELETE', scope: 'consumer', streamToken: 2, responseType: `${T}consumer_delete_response`, implemented: true, serve: (c, t, m) => c.delete(t[2]!, t[3]!, m) },
  { pattern: 'CONSUMER.NAMES.*', operation: 'CONSUMER.NAMES', scope: 'consumer', streamToken: 2, responseType: `${T}consumer_names_response`, implemented: true, serve: (c, t, m) => c.page('NAMES', t[2]!, m) },
  { pattern: 'CONSUMER.LIST.*', operation: 'CONSUMER.LIST', scope: 'consumer', streamToken: 2, responseType: `${T}consumer_list_response`, implemented: true, serve: (c, t, m) => c.page('LIST', t[2]!, m) },
  // nats-server's consumer subscribes its own pull subject; a pull never gets an error reply.
  { pattern: 'CONSUMER.MSG.NEXT.*.*', operation: 'CONSUMER.MSG.NEXT', scope: 'consumer', streamToken: 3, streamOp: 'pull', responseType: `${T}consumer_getnext_response`, implemented: true, outsideApiStats: true, serve: (c, t, m) => c.pull(t[3]!, t[4]!, m) },
  { pattern: 'CONSUMER.LEADER.STEPDOWN.*.*', operation: 'CONSUMER.LEADER.STEPDOWN', scope: 'consumer', streamToken: 3, responseType: `${T}consumer_leader_stepdown_response`, implemented: true, clusterOnly: true, serve: (c, t, m) => c.stepDown(t[3]!, t[4]!, m) },
  { pattern: 'CONSUMER.PAUSE.*.*', operation: 'CONSUMER.PAUSE', scope: 'consumer', streamToken: 2, responseType: `${T}consumer_pause_response`, implemented: true, serve: (c, t, m) => c.pause(t[2]!, t[3]!, m) },
  { pattern: 'CONSUMER.UNPIN.*.*', operation: 'CONSUMER.UNPIN', scope: 'consumer', streamToken: 2, responseType: `${T}consumer_unpin_response`, implemented: true, serve: (c, t, m) => c.unpin(t[2]!, t[3]!, m) },
  // 2.14's consumer subscribes its own reset subject, as its pull subject.
  { pattern: 'CONSUMER.RESET.*.*', operation: 'CONSUMER.RESET', scope: 'consumer', streamToken: 2, streamOp: 'pull', responseType: `${T}consumer_reset_response`, implemented: true, outsideApiStats: true, serve: (c, t, m) => c.reset(t[2]!, t[3]!, m) },
];

interface EndpointEntry {
  readonly subject: string;
  readonly queue: null;
  readonly endpoint: ApiEndpoint;
}

/** Cached (a pull subject repeats per consumer), except direct gets: their subjects carry a key each. */
const BY_PATTERN = new Sublist<EndpointEntry>({ uncachedPrefixes: ['DIRECT.GET.'] });
for (const endpoint of API_ENDPOINTS) BY_PATTERN.insert({ subject: endpoint.pattern, queue: null, endpoint });

/** The endpoint of a subject's part after `$JS.API.` (e.g. `STREAM.INFO.ORDERS`); undefined: none. */
export function endpointOfSuffix(suffix: string): ApiEndpoint | undefined {
  const plain = BY_PATTERN.match(suffix).plain;
  // The patterns do not overlap (api-endpoints.test.ts), so at most one matches.
  return plain.length === 1 ? plain[0]!.endpoint : undefined;
}

/** The last tokens matched: one request's tokens are matched by the service, the router and the handler in turn. */
let lastTokens: readonly string[] | null = null;
let lastEndpoint: ApiEndpoint | undefined;

/** The endpoint of the tokens after `$JS.API` (or `$JS.<domain>.API`); `t` is never changed once matched. */
export function endpointOf(t: readonly string[]): ApiEndpoint | undefined {
  if (t === lastTokens) return lastEndpoint;
  const endpoint = t.length === 0 ? undefined : endpointOfSuffix(t.join('.'));
  lastTokens = t;
  lastEndpoint = endpoint;
  return endpoint;
}

/** `$JS.API.STREAM.INFO.S` or `$JS.<domain>.API.STREAM.INFO.S` → `STREAM.INFO.S`; null when it is neither form. */
export function apiSuffixOf(subject: string): string | null {
  if (subject.startsWith('$JS.API.')) return subject.substring(8);
  if (!subject.startsWith('$JS.')) return null;
  const domainEnd = subject.indexOf('.', 4);
  if (domainEnd < 0 || !subject.startsWith('.API.', domainEnd)) return null;
  return subject.substring(domainEnd + 5);
}

// ---- metrics labels ------------------------------------------------------------------------------

/** Every operation label apiOperationOf can return (`OTHER`: no endpoint). */
export const API_OPERATION_LABELS: readonly string[] = [...new Set(API_ENDPOINTS.map((e) => e.operation)), 'OTHER'];

/** `$JS.API.STREAM.INFO.ORDERS` → `STREAM.INFO`; `$JS.<domain>.API.…` too; `OTHER` for no endpoint. */
export function apiOperationOf(subject: string): string {
  const suffix = apiSuffixOf(subject);
  return (suffix === null ? undefined : endpointOfSuffix(suffix))?.operation ?? 'OTHER';
}

/** A response type's operation: the first endpoint's that answers with it (CONSUMER.CREATE for every create). */
const OPERATION_OF_TYPE = new Map<string, string>();
for (const e of API_ENDPOINTS) if (!OPERATION_OF_TYPE.has(e.responseType)) OPERATION_OF_TYPE.set(e.responseType, e.operation);

/** `io.nats.jetstream.api.v1.stream_create_response` → `STREAM.CREATE` (the request's operation label). */
export function apiOperationOfResponseType(type: string): string {
  return OPERATION_OF_TYPE.get(type) ?? 'OTHER';
}
