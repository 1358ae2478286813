// The `Nats-Stream-Source` header a sourced message carries, as nats-server 2.10+ writes it
// (genSourceHeader): `<name>[:<api hash>] <origin seq> <filter or >> <dest or >> <origin subject>`. It is also
// the sourcing stream's record of each origin's position: a new leader reads the last one per source back
// from the stored messages (startingSequenceForSources), so the position lives in the replicated state.
import { createHash } from 'node:crypto';

export const STREAM_SOURCE_HEADER = 'Nats-Stream-Source';

const DIGITS = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

/** nats-server's getHash: 8 characters of sha256, each byte modulo 62. */
export function apiPrefixHash(api: string): string {
  const b = createHash('sha256').update(api).digest();
  let out = '';
  for (let i = 0; i < 8; i++) out += DIGITS[b[i]! % 62];
  return out;
}

/** The header value for one message: `iname` is the source's index name (`<name> <filter> <dest>`). */
export function sourceHeaderValue(iname: string, originSeq: number, originSubject: string): string {
  const sp = iname.indexOf(' ');
  return `${iname.slice(0, sp)} ${originSeq} ${iname.slice(sp + 1)} ${originSubject}`;
}

/** The index name and origin sequence of a header value (streamAndSeq, 2.10 form), or null. */
export function parseSourceHeader(value: string): { iname: string; originSeq: number } | null {
  const f = value.split(' ');
  if (f.length < 4) return null;
  const seq = Number(f[1]);
  if (!Number.isSafeInteger(seq) || seq <= 0) return null;
  return { iname: `${f[0]} ${f[2]} ${f[3]}`, originSeq: seq };
}

const CRLF = '\r\n';
const STRIPPED_PREFIXES = ['Nats-Expected-', 'Nats-Batch-'];

/**
 * The header block to store for a sourced (or mirrored) message: the origin's block without its own
 * Nats-Stream-Source (daisy chains), Nats-Expected-* and Nats-Batch-* lines (never validated again), plus
 * `add` as a new Nats-Stream-Source line when given. Latin-1 keeps every byte as it was.
 */
export function sourcedHeader(block: Buffer | null, add: string | undefined): Buffer | null {
  const has = block !== null && block.length > 0;
  if (!has && add === undefined) return null;
  const text = has ? block.toString('latin1') : `NATS/1.0${CRLF}${CRLF}`;
  const needsStrip = has && (text.includes('Nats-Expected-') || text.includes('Nats-Batch-') || (add !== undefined && text.includes(STREAM_SOURCE_HEADER)));
  if (!needsStrip && add === undefined) return block;
  const lines = text.split(CRLF);
  const kept: string[] = [lines[0]!];
  for (let i = 1; i < lines.length; i++) {
    const l = lines[i]!;
    if (l.length === 0) continue;
    if (STRIPPED_PREFIXES.some((p) => l.startsWith(p))) continue;
    if (add !== undefined && l.startsWith(`${STREAM_SOURCE_HEADER}:`)) continue;
    kept.push(l);
  }
  if (add !== undefined) kept.push(`${STREAM_SOURCE_HEADER}: ${add}`);
  return Buffer.from(kept.join(CRLF) + CRLF + CRLF, 'latin1');
}

/** The Nats-Stream-Source value of a stored header block, or undefined. */
export function readSourceHeader(block: Uint8Array): string | undefined {
  const text = Buffer.from(block.buffer, block.byteOffset, block.byteLength).toString('latin1');
  const at = text.indexOf(`${CRLF}${STREAM_SOURCE_HEADER}:`);
  if (at < 0) return undefined;
  const start = at + CRLF.length + STREAM_SOURCE_HEADER.length + 1;
  const end = text.indexOf(CRLF, start);
  return text.slice(start, end < 0 ? undefined : end).trim();
}
