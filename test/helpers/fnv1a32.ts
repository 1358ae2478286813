// Go's hash/fnv New32a, written here independently of the server's, as the oracle for `{{partition()}}`
// buckets in the mapping and transform tests.
export function fnv1a32(text: string): number {
  let h = 0x811c9dc5;
  for (const b of Buffer.from(text)) h = Math.imul(h ^ b, 0x01000193) >>> 0;
  return h >>> 0;
}
