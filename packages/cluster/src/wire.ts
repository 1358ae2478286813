// The frames of cluster.proto as TypeScript sees them, and the Batch codec (protobufjs, loaded at runtime
// from the shipped .proto so the schema has one source of truth).
import { fileURLToPath } from 'node:url';
import protobuf from 'protobufjs';
import { decodeBatchWith, encodeBatchWith, type FrameCodec } from './batch-codec.js';

export interface HelloFrame {
  clusterName: string;
  serverName: string;
  serverId: string;
  clientUrl: string;
  clusterUrl: string;
  raftNodeId: number;
  version: number;
  /** fresh random bytes per link; empty from nodes without a secret */
  nonce?: Uint8Array;
  /** the sender holds a cluster secret and sends an Auth proof after the peer's Hello */
  auth?: boolean;
  /** the sender reads the `account` of interest and message frames (older nodes take all as the global account's) */
  accounts?: boolean;
  /** host:port of the sender's websocket listener; absent without one */
  wsUrl?: string;
  /** the sender's server_tags (JetStream placement); absent: none */
  tags?: string[];
}

export type RefuseCode =
  | 'wrong_cluster'
  | 'duplicate'
  | 'duplicate_name'
  | 'self'
  | 'partitioned'
  | 'version'
  | 'auth_required'
  | 'bad_auth';

export interface RefuseFrame {
  code: RefuseCode;
  reason: string;
}

export interface InterestEntry {
  subject: string;
  /** '' for plain subscriptions */
  queue: string;
  count: number;
  /** how many of `count` are client subscriptions (the rest are the sender's internal ones) */
  clients: number;
}

export interface InterestFrame {
  full: boolean;
  entries: InterestEntry[];
  /** absent for the global account ($G); `full` then replaces the sender's interest in this account only */
  account?: string;
}

export interface RoutedMessageFrame {
  subject: string;
  reply: string;
  message: Uint8Array;
  /** -1 when the message carries no headers */
  headerBytes: number;
  queues: string[];
  /** '' normally; else receivers match subscriptions on `route` and deliver with `subject` (JetStream delivery) */
  route: string;
  /** the account it was published in; absent for the global account ($G), so its frames carry nothing extra */
  account?: string;
}

export interface PeerInfoWire {
  serverId: string;
  serverName: string;
  clusterUrl: string;
  clientUrl: string;
}

export interface RaftEntryWire {
  index: number;
  term: number;
  type: number;
  data: Uint8Array;
}

export interface RaftSnapshotMetaWire {
  index: number;
  term: number;
  voters: number[];
  learners: number[];
}

export interface RaftMessageWire {
  group: string;
  type: number;
  from: number;
  to: number;
  term: number;
  logTerm: number;
  index: number;
  entries: RaftEntryWire[];
  commit: number;
  reject: boolean;
  hintIndex: number;
  hintTerm: number;
  context: number;
  force: boolean;
  snapshotMeta: RaftSnapshotMetaWire | null;
  offset: number;
  data: Uint8Array;
  done: boolean;
}

/** Exactly one body field is set, as the proto's oneof says. */
export type Frame =
  | { hello: HelloFrame }
  | { refuse: RefuseFrame }
  | { interest: InterestFrame }
  | { msg: RoutedMessageFrame }
  | { raft: RaftMessageWire }
  | { peers: { peers: PeerInfoWire[] } }
  | { ping: { sentMs: number } }
  | { auth: { proof: Uint8Array } };

export const LINK_PROTOCOL_VERSION = 1;
export const LINK_METHOD_PATH = '/flotilla.cluster.ClusterLink/Link';
export const PROTO_PATH = fileURLToPath(new URL('../proto/cluster.proto', import.meta.url));

const root = protobuf.loadSync(PROTO_PATH);
const BatchType = root.lookupType('flotilla.cluster.Batch');
const FrameType = root.lookupType('flotilla.cluster.Frame');

const frameCodec: FrameCodec = {
  encodeFrame: (frame) => FrameType.encode(frame as unknown as Record<string, unknown>).finish(),
  decodeFrame: (bytes) => normaliseFrame(FrameType.decode(bytes) as unknown as Record<string, unknown>),
};

/** One Batch in protobuf; routed messages take the hand-written path of batch-codec.ts. */
export function encodeBatch(frames: readonly Frame[]): Buffer {
  return encodeBatchWith(frameCodec, frames);
}

/** Decodes a Batch; 64-bit fields come back as JS numbers (Raft indexes stay far below 2^53). */
export function decodeBatch(bytes: Buffer): Frame[] {
  return decodeBatchWith(frameCodec, bytes);
}

/** The same two operations through protobufjs alone: the reference the hand-written codec is tested against. */
export function encodeBatchReference(frames: readonly Frame[]): Buffer {
  const bytes = BatchType.encode({ frames }).finish();
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

export function decodeBatchReference(bytes: Uint8Array): Frame[] {
  const decoded = BatchType.decode(bytes) as unknown as { frames?: Record<string, unknown>[] };
  const out: Frame[] = [];
  for (const f of decoded.frames ?? []) {
    const frame = normaliseFrame(f);
    if (frame !== null) out.push(frame);
  }
  return out;
}

type Long = { low: number; high: number };

/** protobufjs yields Long objects for uint64 when the `long` package is installed. */
export function toNumber(v: unknown): number {
  if (typeof v === 'number') return v;
  if (v === undefined || v === null) return 0;
  const l = v as Long;
  return (l.high >>> 0) * 4294967296 + (l.low >>> 0);
}

const EMPTY = new Uint8Array(0);

/** protobufjs leaves an empty bytes field as its default (an empty array), not a Uint8Array. */
function bytesOf(v: unknown): Uint8Array {
  if (v instanceof Uint8Array) return v;
  if (Array.isArray(v) && v.length > 0) return Uint8Array.from(v as number[]);
  return EMPTY;
}

/** `{ account }` when the frame names one; nothing for the global account's (an empty string on the wire). */
function accountOf(f: Record<string, unknown>): { account?: string } {
  const account = f['account'];
  return typeof account === 'string' && account !== '' ? { account } : {};
}

function normaliseFrame(f: Record<string, unknown>): Frame | null {
  if (f['msg']) {
    const m = f['msg'] as Record<string, unknown>;
    return {
      msg: {
        subject: (m['subject'] as string) ?? '',
        reply: (m['reply'] as string) ?? '',
        message: bytesOf(m['message']),
        headerBytes: (m['headerBytes'] as number) ?? 0,
        queues: (m['queues'] as string[]) ?? [],
        route: (m['route'] as string) ?? '',
        ...accountOf(m),
      },
    };
  }
  if (f['raft']) return { raft: normaliseRaft(f['raft'] as Record<string, unknown>) };
  if (f['interest']) {
    const i = f['interest'] as { full?: boolean; entries?: Record<string, unknown>[] };
    return {
      interest: {
        full: i.full === true,
        entries: (i.entries ?? []).map((e) => ({
          subject: (e['subject'] as string) ?? '',
          queue: (e['queue'] as string) ?? '',
          count: (e['count'] as number) ?? 0,
          clients: (e['clients'] as number) ?? 0,
        })),
        ...accountOf(i as Record<string, unknown>),
      },
    };
  }
  if (f['hello']) {
    const h = f['hello'] as Record<string, unknown>;
    return {
      hello: {
        clusterName: (h['clusterName'] as string) ?? '',
        serverName: (h['serverName'] as string) ?? '',
        serverId: (h['serverId'] as string) ?? '',
        clientUrl: (h['clientUrl'] as string) ?? '',
        clusterUrl: (h['clusterUrl'] as string) ?? '',
        raftNodeId: (h['raftNodeId'] as number) ?? 0,
        version: (h['version'] as number) ?? 0,
        nonce: bytesOf(h['nonce']),
        auth: h['auth'] === true,
        ...(h['accounts'] === true ? { accounts: true } : {}),
        ...(typeof h['wsUrl'] === 'string' && h['wsUrl'] !== '' ? { wsUrl: h['wsUrl'] } : {}),
        ...(Array.isArray(h['tags']) && h['tags'].length > 0 ? { tags: (h['tags'] as unknown[]).filter((t): t is string => typeof t === 'string') } : {}),
      },
    };
  }
  if (f['refuse']) {
    const r = f['refuse'] as Record<string, unknown>;
    return { refuse: { code: ((r['code'] as string) ?? '') as RefuseCode, reason: (r['reason'] as string) ?? '' } };
  }
  if (f['peers']) {
    const p = f['peers'] as { peers?: Record<string, unknown>[] };
    return {
      peers: {
        peers: (p.peers ?? []).map((x) => ({
          serverId: (x['serverId'] as string) ?? '',
          serverName: (x['serverName'] as string) ?? '',
          clusterUrl: (x['clusterUrl'] as string) ?? '',
          clientUrl: (x['clientUrl'] as string) ?? '',
        })),
      },
    };
  }
  if (f['auth']) return { auth: { proof: bytesOf((f['auth'] as Record<string, unknown>)['proof']) } };
  if (f['ping']) return { ping: { sentMs: toNumber((f['ping'] as Record<string, unknown>)['sentMs']) } };
  return null;
}

function normaliseRaft(r: Record<string, unknown>): RaftMessageWire {
  const meta = r['snapshotMeta'] as Record<string, unknown> | undefined | null;
  return {
    group: (r['group'] as string) ?? '',
    type: (r['type'] as number) ?? 0,
    from: (r['from'] as number) ?? 0,
    to: (r['to'] as number) ?? 0,
    term: toNumber(r['term']),
    logTerm: toNumber(r['logTerm']),
    index: toNumber(r['index']),
    entries: ((r['entries'] as Record<string, unknown>[] | undefined) ?? []).map((e) => ({
      index: toNumber(e['index']),
      term: toNumber(e['term']),
      type: (e['type'] as number) ?? 0,
      data: bytesOf(e['data']),
    })),
    commit: toNumber(r['commit']),
    reject: r['reject'] === true,
    hintIndex: toNumber(r['hintIndex']),
    hintTerm: toNumber(r['hintTerm']),
    context: toNumber(r['context']),
    force: r['force'] === true,
    snapshotMeta: meta
      ? {
          index: toNumber(meta['index']),
          term: toNumber(meta['term']),
          voters: (meta['voters'] as number[]) ?? [],
          learners: (meta['learners'] as number[]) ?? [],
        }
      : null,
    offset: toNumber(r['offset']),
    data: bytesOf(r['data']),
    done: r['done'] === true,
  };
}
