// Which node answers a `$JS.API` request in a cluster (cluster-semantics §2): catalogue calls go to the meta
// leader, calls about one stream (its consumers included) to that stream's leader.
const T = 'io.nats.jetstream.api.v1.';

export type ApiRoute =
  /** INFO, STREAM.CREATE/UPDATE/DELETE/NAMES/LIST/PEER.REMOVE, META.* */
  | { kind: 'catalogue'; type: string }
  /** STREAM.INFO/PURGE/MSG.*, STREAM.LEADER.STEPDOWN, CONSUMER.*, DIRECT.GET */
  | { kind: 'stream'; stream: string; type: string; op: StreamOp }
  /** not an endpoint this layer knows: every node stays silent */
  | { kind: 'none' };

/** `info` may be answered by a member of a leaderless group; `pull` never gets an error reply. */
export type StreamOp = 'info' | 'pull' | 'stepdown' | 'other';

/** `t`: the subject's tokens after `$JS.API` (or `$JS.<domain>.API`). */
export function routeOf(t: readonly string[]): ApiRoute {
  const n = t.length;
  switch (t[0]) {
    case 'INFO':
      return n === 1 ? { kind: 'catalogue', type: `${T}account_info_response` } : { kind: 'none' };
    case 'META':
      return n === 3 && t[1] === 'LEADER' && t[2] === 'STEPDOWN'
        ? { kind: 'catalogue', type: `${T}meta_leader_stepdown_response` }
        : { kind: 'none' };
    case 'STREAM':
      return streamRoute(t);
    case 'CONSUMER':
      return consumerRoute(t);
    case 'DIRECT':
      return n >= 3 && t[1] === 'GET' ? { kind: 'stream', stream: t[2]!, type: `${T}stream_msg_get_response`, op: 'pull' } : { kind: 'none' };
    default:
      return { kind: 'none' };
  }
}

function streamRoute(t: readonly string[]): ApiRoute {
  const n = t.length;
  const op = t[1];
  if (n === 2 && op === 'NAMES') return { kind: 'catalogue', type: `${T}stream_names_response` };
  if (n === 2 && op === 'LIST') return { kind: 'catalogue', type: `${T}stream_list_response` };
  if (n === 3) {
    switch (op) {
      case 'CREATE':
        return { kind: 'catalogue', type: `${T}stream_create_response` };
      case 'UPDATE':
        return { kind: 'catalogue', type: `${T}stream_update_response` };
      case 'DELETE':
        return { kind: 'catalogue', type: `${T}stream_delete_response` };
      case 'INFO':
        return { kind: 'stream', stream: t[2]!, type: `${T}stream_info_response`, op: 'info' };
      case 'PURGE':
        return { kind: 'stream', stream: t[2]!, type: `${T}stream_purge_response`, op: 'other' };
      default:
        return { kind: 'none' };
    }
  }
  if (n === 4 && op === 'MSG' && (t[2] === 'GET' || t[2] === 'DELETE')) {
    return { kind: 'stream', stream: t[3]!, type: `${T}stream_msg_${t[2] === 'GET' ? 'get' : 'delete'}_response`, op: 'other' };
  }
  if (n === 4 && op === 'LEADER' && t[2] === 'STEPDOWN') {
    return { kind: 'stream', stream: t[3]!, type: `${T}stream_leader_stepdown_response`, op: 'stepdown' };
  }
  // nats-server's meta leader handles peer removal: it changes the assignment.
  if (n === 4 && op === 'PEER' && t[2] === 'REMOVE') return { kind: 'catalogue', type: `${T}stream_remove_peer_response` };
  return { kind: 'none' };
}

function consumerRoute(t: readonly string[]): ApiRoute {
  const n = t.length;
  const op = t[1];
  const stream = (s: string | undefined, type: string, kind: StreamOp = 'other'): ApiRoute =>
    s === undefined ? { kind: 'none' } : { kind: 'stream', stream: s, type: `${T}${type}`, op: kind };
  switch (op) {
    case 'CREATE':
      return n >= 3 ? stream(t[2], 'consumer_create_response') : { kind: 'none' };
    case 'DURABLE':
      return n >= 4 && t[2] === 'CREATE' ? stream(t[3], 'consumer_create_response') : { kind: 'none' };
    case 'INFO':
      return n === 4 ? stream(t[2], 'consumer_info_response') : { kind: 'none' };
    case 'DELETE':
      return n === 4 ? stream(t[2], 'consumer_delete_response') : { kind: 'none' };
    case 'NAMES':
      return n === 3 ? stream(t[2], 'consumer_names_response') : { kind: 'none' };
    case 'LIST':
      return n === 3 ? stream(t[2], 'consumer_list_response') : { kind: 'none' };
    case 'MSG':
      return n === 5 && t[2] === 'NEXT' ? stream(t[3], 'consumer_getnext_response', 'pull') : { kind: 'none' };
    case 'LEADER':
      return n === 5 && t[2] === 'STEPDOWN' ? stream(t[3], 'consumer_leader_stepdown_response') : { kind: 'none' };
    default:
      // Anything else (PAUSE, …) is about a stream too when it names one; the stream leader decides.
      return n >= 3 ? stream(t[2], 'consumer_info_response') : { kind: 'none' };
  }
}
