// @flotilla/raft Message <-> the RaftMessage of cluster.proto.
import { EMPTY_BYTES, type Entry, type EntryType, type Message, type MessageType } from '@flotilla/raft';
import type { RaftMessageWire } from './wire.js';

// Order is the RaftMessageType enum's in cluster.proto.
const TYPES: readonly MessageType[] = [
  'preVote',
  'preVoteResp',
  'vote',
  'voteResp',
  'append',
  'appendResp',
  'heartbeat',
  'heartbeatResp',
  'snapshotChunk',
  'snapshotChunkResp',
  'timeoutNow',
];
const TYPE_NUMBER = new Map<MessageType, number>(TYPES.map((t, i) => [t, i]));

export function raftToWire(m: Message): RaftMessageWire {
  const type = TYPE_NUMBER.get(m.type);
  if (type === undefined) throw new TypeError(`unknown raft message type ${String(m.type)}`);
  return {
    group: m.group,
    type,
    from: m.from,
    to: m.to,
    term: m.term,
    logTerm: m.logTerm,
    index: m.index,
    entries: m.entries.map((e) => ({ index: e.index, term: e.term, type: e.type, data: e.data })),
    commit: m.commit,
    reject: m.reject,
    hintIndex: m.hintIndex,
    hintTerm: m.hintTerm,
    context: m.context,
    force: m.force,
    snapshotMeta: m.snapshotMeta
      ? {
          index: m.snapshotMeta.index,
          term: m.snapshotMeta.term,
          voters: [...m.snapshotMeta.config.voters],
          learners: [...m.snapshotMeta.config.learners],
        }
      : null,
    offset: m.offset,
    data: m.data,
    done: m.done,
  };
}

/** null for a type this version does not know (a newer peer): the message is dropped, as a lossy link would. */
export function raftFromWire(w: RaftMessageWire): Message | null {
  const type = TYPES[w.type];
  if (type === undefined) return null;
  const entries: Entry[] = w.entries.map((e) => ({
    index: e.index,
    term: e.term,
    type: e.type as EntryType,
    data: e.data,
  }));
  return {
    group: w.group,
    type,
    from: w.from,
    to: w.to,
    term: w.term,
    logTerm: w.logTerm,
    index: w.index,
    entries,
    commit: w.commit,
    reject: w.reject,
    hintIndex: w.hintIndex,
    hintTerm: w.hintTerm,
    context: w.context,
    force: w.force,
    snapshotMeta: w.snapshotMeta
      ? {
          index: w.snapshotMeta.index,
          term: w.snapshotMeta.term,
          config: { voters: w.snapshotMeta.voters, learners: w.snapshotMeta.learners },
        }
      : null,
    offset: w.offset,
    data: w.data.length === 0 ? EMPTY_BYTES : w.data,
    done: w.done,
  };
}
