// A stream group's Raft snapshot: version, the store's last sequence (to tell at startup whether the local
// store already holds the snapshot), then the store's own snapshot stream (store/snapshot-codec framing).
const SNAPSHOT_VERSION = 1;
const HEADER_BYTES = 7;

export interface ReplicaSnapshot {
  lastSeq: number;
  storeBytes: Uint8Array;
}

export function encodeReplicaSnapshot(lastSeq: number, storeChunks: readonly Uint8Array[]): Buffer {
  const header = Buffer.alloc(HEADER_BYTES);
  header[0] = SNAPSHOT_VERSION;
  header.writeUIntBE(lastSeq, 1, 6);
  return Buffer.concat([header, ...storeChunks]);
}

export function decodeReplicaSnapshot(data: Uint8Array): ReplicaSnapshot {
  const b = Buffer.from(data.buffer, data.byteOffset, data.byteLength);
  if (b.length < HEADER_BYTES || b[0] !== SNAPSHOT_VERSION) throw new RangeError('unknown stream snapshot format');
  return { lastSeq: b.readUIntBE(1, 6), storeBytes: b.subarray(HEADER_BYTES) };
}
