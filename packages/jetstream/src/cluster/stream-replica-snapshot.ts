// A stream group's Raft snapshot: version, the store's last sequence (to tell at startup whether the local
// store already holds the snapshot), the consumers' state (opaque, from the consumer-replication hooks),
// then the store's own snapshot stream (store/snapshot-codec framing).
const SNAPSHOT_VERSION = 2;
const HEADER_BYTES = 11;

export interface ReplicaSnapshot {
  lastSeq: number;
  consumers: Uint8Array;
  storeBytes: Uint8Array;
}

export function encodeReplicaSnapshot(lastSeq: number, consumers: Uint8Array, storeChunks: readonly Uint8Array[]): Buffer {
  const header = Buffer.alloc(HEADER_BYTES);
  header[0] = SNAPSHOT_VERSION;
  header.writeUIntBE(lastSeq, 1, 6);
  header.writeUInt32BE(consumers.length, 7);
  return Buffer.concat([header, consumers, ...storeChunks]);
}

export function decodeReplicaSnapshot(data: Uint8Array): ReplicaSnapshot {
  const b = Buffer.from(data.buffer, data.byteOffset, data.byteLength);
  if (b.length < HEADER_BYTES || b[0] !== SNAPSHOT_VERSION) throw new RangeError('unknown stream snapshot format');
  const consumersLen = b.readUInt32BE(7);
  if (HEADER_BYTES + consumersLen > b.length) throw new RangeError('truncated stream snapshot');
  return {
    lastSeq: b.readUIntBE(1, 6),
    consumers: b.subarray(HEADER_BYTES, HEADER_BYTES + consumersLen),
    storeBytes: b.subarray(HEADER_BYTES + consumersLen),
  };
}
