// Plain-data types shared by the core, the driver and log stores. Everything here serialises easily
// (numbers, strings, arrays, Uint8Array) so a transport can multiplex many groups over one stream.

export type NodeId = number;
/** 0 means "nobody" (no vote, no known leader). Node ids are positive integers. */
export const NONE: NodeId = 0;

/**
 * Normal: opaque application data. ConfChange: a membership change (interpreted by raft). Batch: opaque to the
 * core; RaftNode packs several proposals into one entry and unpacks them when applying.
 */
export const EntryType = { Normal: 0, ConfChange: 1, Batch: 2 } as const;
export type EntryType = (typeof EntryType)[keyof typeof EntryType];

export interface Entry {
  readonly index: number;
  readonly term: number;
  readonly type: EntryType;
  /** Opaque to raft for Normal entries; an encoded ConfChange for ConfChange entries. */
  readonly data: Uint8Array;
}

export interface HardState {
  readonly term: number;
  readonly vote: NodeId;
  readonly commit: number;
}

export interface MembershipConfig {
  readonly voters: readonly NodeId[];
  readonly learners: readonly NodeId[];
}

export interface SnapshotMeta {
  readonly index: number;
  readonly term: number;
  readonly config: MembershipConfig;
}

export interface Snapshot {
  readonly meta: SnapshotMeta;
  readonly data: Uint8Array;
}

export const ConfChangeType = {
  /** Index 1 of a new group's log: the initial voters (identical on every founding member). */
  Bootstrap: 'bootstrap',
  AddLearner: 'addLearner',
  Promote: 'promote',
  Remove: 'remove',
} as const;
export type ConfChangeType = (typeof ConfChangeType)[keyof typeof ConfChangeType];

export interface ConfChange {
  readonly type: ConfChangeType;
  readonly nodeId: NodeId;
  /** Bootstrap only. */
  readonly voters?: readonly NodeId[];
}

export const MessageType = {
  PreVote: 'preVote',
  PreVoteResp: 'preVoteResp',
  Vote: 'vote',
  VoteResp: 'voteResp',
  Append: 'append',
  AppendResp: 'appendResp',
  Heartbeat: 'heartbeat',
  HeartbeatResp: 'heartbeatResp',
  SnapshotChunk: 'snapshotChunk',
  SnapshotChunkResp: 'snapshotChunkResp',
  TimeoutNow: 'timeoutNow',
} as const;
export type MessageType = (typeof MessageType)[keyof typeof MessageType];

/**
 * One Raft message. Fields not used by a type are left at their zero values so every message has
 * the same flat shape (easy to encode as one protobuf message).
 */
export interface Message {
  group: string;
  type: MessageType;
  from: NodeId;
  to: NodeId;
  term: number;
  /** Append: term of the entry at `index` (prevLogTerm). Votes: candidate's last log term. */
  logTerm: number;
  /** Append: prevLogIndex. AppendResp: last matched index (or the rejected prevIndex). Votes: last log index. */
  index: number;
  entries: Entry[];
  commit: number;
  reject: boolean;
  /** AppendResp reject: first index of the conflicting term in the follower's log, or its lastIndex + 1. */
  hintIndex: number;
  /** AppendResp reject: term of the follower's entry at the rejected index, 0 when the follower's log is shorter. */
  hintTerm: number;
  /** Heartbeat round number, used to confirm ReadIndex requests. */
  context: number;
  /** Vote sent on a leader transfer: voters grant it even while they still hear from a leader. */
  force: boolean;
  /** SnapshotChunk / SnapshotChunkResp. */
  snapshotMeta: SnapshotMeta | null;
  offset: number;
  data: Uint8Array;
  done: boolean;
}

export interface ReadState {
  /** Caller-chosen request id. */
  readonly requestId: number;
  /** Reads are linearizable once the state machine has applied up to this index. */
  readonly index: number;
}

/**
 * Work for the driver. Order: send `messages` at once; persist `snapshot`, `entries` (truncating any stored
 * suffix from entries[0].index) and `hardState` (synced when `mustSync`); then send `messagesAfterPersist`,
 * install `snapshot` in the state machine, apply `committedEntries`; then call `advance(ready)`.
 */
export interface Ready {
  readonly hardState: HardState | null;
  readonly entries: readonly Entry[];
  readonly snapshot: Snapshot | null;
  readonly committedEntries: readonly Entry[];
  readonly messages: readonly Message[];
  readonly messagesAfterPersist: readonly Message[];
  readonly readStates: readonly ReadState[];
  readonly mustSync: boolean;
}

export const Role = {
  Follower: 'follower',
  PreCandidate: 'preCandidate',
  Candidate: 'candidate',
  Leader: 'leader',
} as const;
export type Role = (typeof Role)[keyof typeof Role];

export function emptyMessage(group: string, type: MessageType, from: NodeId, to: NodeId, term: number): Message {
  return {
    group,
    type,
    from,
    to,
    term,
    logTerm: 0,
    index: 0,
    entries: [],
    commit: 0,
    reject: false,
    hintIndex: 0,
    hintTerm: 0,
    context: 0,
    force: false,
    snapshotMeta: null,
    offset: 0,
    data: EMPTY_BYTES,
    done: false,
  };
}

export const EMPTY_BYTES: Uint8Array = new Uint8Array(0);
