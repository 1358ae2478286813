// A stream group's Raft snapshot: version, flags, the store's last sequence (to tell whether a local store
// already holds it), the consumers' state (opaque, from the consumer-replication hooks), then — in a complete
// image only — the store's own snapshot stream (store/snapshot-codec framing). A file stream's compaction
// snapshot is a stand-in without the store (its flushed store holds it); the complete image is made only when
// a follower needs it (RaftNode asks StateMachine.fullSnapshot).
const SNAPSHOT_VERSION = 3;
const HAS_STORE = 1;
const HEADER_BYTES = 12;

export interface ReplicaSnapshot {
  lastSeq: number;
  consumers: Uint8Array;
  /** null in a stand-in. */
  storeBytes: Uint8Array | null;
}

export function encodeReplicaSnapshot(lastSeq: number, consumers: Uint8Array, storeChunks: readonly Uint8Array[] | null): Buffer {
  const header = Buffer.alloc(HEADER_BYTES);
  header[0] = SNAPSHOT_VERSION;
  header[1] = storeChunks === null ? 0 : HAS_STORE;
  header.writeUIntBE(lastSeq, 2, 6);
  header.writeUInt32BE(consumers.length, 8);
  return Buffer.concat([header, consumers, ...(storeChunks ?? [])]);
}

export function decodeReplicaSnapshot(data: Uint8Array): ReplicaSnapshot {
  const b = Buffer.from(data.buffer, data.byteOffset, data.byteLength);
  if (b.length < HEADER_BYTES || b[0] !== SNAPSHOT_VERSION) throw new RangeError('unknown stream snapshot format');
  const consumersLen = b.readUInt32BE(8);
  if (HEADER_BYTES + consumersLen > b.length) throw new RangeError('truncated stream snapshot');
  return {
    lastSeq: b.readUIntBE(2, 6),
    consumers: b.subarray(HEADER_BYTES, HEADER_BYTES + consumersLen),
    storeBytes: (b[1]! & HAS_STORE) !== 0 ? b.subarray(HEADER_BYTES + consumersLen) : null,
  };
}
