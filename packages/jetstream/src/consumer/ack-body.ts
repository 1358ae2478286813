// What an acknowledgement body asks for (§11): +ACK, -NAK [delay], +WPI, +TERM [reason], +NXT [request].
import { nsToMs } from '@flotilla/store';

export type AckKind = 'ack' | 'nak' | 'progress' | 'term' | 'next' | 'unknown';

/** Classifies an ack body by its first bytes (§11): no string is made on the +ACK hot path. */
export function ackKind(b: Uint8Array): AckKind {
  if (b.length === 0) return 'ack';
  const c0 = b[0];
  if (c0 === 0x2b /* + */ && b.length >= 3) {
    const c1 = b[1];
    if (c1 === 0x41 && b[2] === 0x43 && b[3] === 0x4b) return 'ack'; // +ACK
    if (c1 === 0x4f && b[2] === 0x4b) return 'ack'; // +OK
    if (c1 === 0x57 && b[2] === 0x50 && b[3] === 0x49) return 'progress'; // +WPI
    if (c1 === 0x54 && b[2] === 0x45 && b[3] === 0x52 && b[4] === 0x4d) return 'term'; // +TERM
    if (c1 === 0x4e && b[2] === 0x58 && b[3] === 0x54) return 'next'; // +NXT
  }
  if (c0 === 0x2d /* - */ && b[1] === 0x4e && b[2] === 0x41 && b[3] === 0x4b) return 'nak'; // -NAK
  return 'unknown';
}

/** `-NAK {"delay":ns}` or `-NAK <go duration>`; 0 = redeliver now. */
export function parseNakDelayMs(body: Uint8Array): number {
  if (body.length <= 4) return 0;
  const rest = Buffer.from(body.subarray(4)).toString('utf8').trim();
  if (rest.length === 0) return 0;
  if (rest[0] === '{') {
    try {
      const v = (JSON.parse(rest) as { delay?: unknown }).delay;
      return typeof v === 'number' && v > 0 ? nsToMs(v) : 0;
    } catch {
      return 0;
    }
  }
  return parseGoDurationMs(rest);
}

function parseGoDurationMs(text: string): number {
  const units: Record<string, number> = { ns: 1e-6, us: 1e-3, µs: 1e-3, ms: 1, s: 1000, m: 60_000, h: 3_600_000 };
  const re = /(\d+(?:\.\d+)?)(ns|us|µs|ms|s|m|h)/g;
  let total = 0;
  let matched = 0;
  for (let m = re.exec(text); m !== null; m = re.exec(text)) {
    total += Number(m[1]) * units[m[2]!]!;
    matched += m[0].length;
  }
  return matched === text.length ? total : 0;
}
