// Framing for EntryType.Batch: u32 count, then per proposal u32 length + bytes (big-endian).
// Packing proposals into one entry removes per-entry work on every node; the log store sees one value.

export function packProposals(items: readonly Uint8Array[]): Uint8Array {
  let size = 4;
  for (const item of items) size += 4 + item.length;
  const out = new Uint8Array(size);
  const view = new DataView(out.buffer);
  view.setUint32(0, items.length);
  let offset = 4;
  for (const item of items) {
    view.setUint32(offset, item.length);
    out.set(item, offset + 4);
    offset += 4 + item.length;
  }
  return out;
}

export function unpackProposals(data: Uint8Array): Uint8Array[] {
  const view = new DataView(data.buffer, data.byteOffset, data.byteLength);
  const count = view.getUint32(0);
  const items: Uint8Array[] = [];
  let offset = 4;
  for (let i = 0; i < count; i++) {
    const length = view.getUint32(offset);
    if (offset + 4 + length > data.byteLength) throw new RangeError('truncated packed proposal');
    items.push(data.subarray(offset + 4, offset + 4 + length));
    offset += 4 + length;
  }
  return items;
}
