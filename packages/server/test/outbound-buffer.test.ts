// writeMsgParts (header and body held apart) must put the same bytes on the wire as writeMsg on the joined message.
import { describe, expect, it } from 'vitest';
import type { Socket } from 'node:net';
import { OutboundBuffer } from '../src/outbound-buffer.js';

/** A socket stand-in that keeps what was written. */
function sink(): { socket: Socket; bytes: () => Buffer } {
  const chunks: Buffer[] = [];
  const socket = {
    write: (b: Uint8Array) => chunks.push(Buffer.from(b)),
    cork: () => undefined,
    uncork: () => undefined,
  } as unknown as Socket;
  return { socket, bytes: () => Buffer.concat(chunks) };
}

function joined(header: Uint8Array | null, data: Uint8Array): [number, Buffer] {
  if (header === null) return [-1, Buffer.from(data)];
  return [header.length, Buffer.concat([header, data])];
}

const HEADER = Buffer.from('NATS/1.0\r\nNats-Msg-Id: 7\r\n\r\n');
const cases: Array<[string, Uint8Array | null, Uint8Array, string | null]> = [
  ['no header, small body', null, Buffer.from('hello'), '$JS.ACK.S.D.1.2.3.4.0'],
  ['header and body', HEADER, new Uint8Array(Buffer.from('x'.repeat(100))), 'r'],
  ['header, empty body', HEADER, new Uint8Array(0), null],
  ['large body by reference', HEADER, new Uint8Array(40_000).fill(97), 'inbox.é'],
  ['large body, no header', null, new Uint8Array(20_000).fill(98), null],
];

/** Both buffers hold and flush exactly the same bytes; returns them. */
function expectSameBytes(a: OutboundBuffer, b: OutboundBuffer): Buffer {
  expect(a.pendingBytes).toBe(b.pendingBytes);
  const sa = sink();
  const sb = sink();
  a.flushTo(sa.socket);
  b.flushTo(sb.socket);
  expect(sa.bytes().equals(sb.bytes())).toBe(true);
  return sb.bytes();
}

describe('OutboundBuffer.writeMsgParts', () => {
  it.each(cases)('%s: same bytes as writeMsg', (_name, header, data, reply) => {
    const prefix = Buffer.from(header === null ? 'MSG s 1 ' : 'HMSG s 1 ');
    const a = new OutboundBuffer();
    const b = new OutboundBuffer();
    a.writeMsgParts(prefix, reply, header, data);
    a.writeMsgParts(prefix, reply, header, data);
    const [headerBytes, message] = joined(header, data);
    b.writeMsg(prefix, reply, headerBytes, message);
    b.writeMsg(prefix, reply, headerBytes, message);
    const written = expectSameBytes(a, b);
    const hdr = headerBytes >= 0 ? `${headerBytes} ` : '';
    expect(written.subarray(0, prefix.length + 40).toString('latin1')).toContain(`${reply === null ? '' : Buffer.from(reply).toString('latin1') + ' '}${hdr}${message.length}\r\n`);
  });
});

describe('OutboundBuffer.flushTo buffer reuse', () => {
  /** Keeps the written chunks by reference, as a socket with a queued write does. */
  function referencingSocket(writableLength: number, encrypted = false): { socket: Socket; chunks: Uint8Array[] } {
    const chunks: Uint8Array[] = [];
    const socket = { write: (b: Uint8Array) => chunks.push(b), writableLength, encrypted, cork: () => undefined, uncork: () => undefined } as unknown as Socket;
    return { socket, chunks };
  }
  const prefix = Buffer.from('MSG s 1 ');

  it('keeps its buffer when the socket took everything at once', () => {
    const out = new OutboundBuffer();
    const { socket, chunks } = referencingSocket(0);
    out.writeMsg(prefix, null, -1, Buffer.from('one'));
    out.flushTo(socket);
    const first = Buffer.from(chunks[0]!); // the bytes as written, before the buffer is reused
    out.writeMsg(prefix, null, -1, Buffer.from('two'));
    out.flushTo(socket);
    expect(first.toString()).toBe('MSG s 1 3\r\none\r\n');
    expect(Buffer.from(chunks[1]!).toString()).toBe('MSG s 1 3\r\ntwo\r\n');
    expect(chunks[1]!.buffer).toBe(chunks[0]!.buffer);
  });

  it('moves to a fresh buffer while the socket still holds queued bytes, or for TLS', () => {
    for (const [writableLength, encrypted] of [
      [100, false],
      [0, true],
    ] as const) {
      const out = new OutboundBuffer();
      const { socket, chunks } = referencingSocket(writableLength, encrypted);
      out.writeMsg(prefix, null, -1, Buffer.from('one'));
      out.flushTo(socket);
      out.writeMsg(prefix, null, -1, Buffer.from('two'));
      out.flushTo(socket);
      expect(Buffer.from(chunks[0]!).toString()).toBe('MSG s 1 3\r\none\r\n');
      expect(Buffer.from(chunks[1]!).toString()).toBe('MSG s 1 3\r\ntwo\r\n');
      expect(chunks[1]!.buffer).not.toBe(chunks[0]!.buffer);
    }
  });
});

describe('OutboundBuffer.writeMsgPartsNamed', () => {
  it.each(cases)('%s: same bytes as writeMsgParts with the MSG/HMSG prefix', (_name, header, data, reply) => {
    const subject = '_INBOX.abc.é.7';
    const sid = '42';
    const a = new OutboundBuffer();
    const b = new OutboundBuffer();
    a.writeMsgPartsNamed(subject, sid, reply, header, data);
    b.writeMsgParts(Buffer.from(`${header === null ? 'MSG' : 'HMSG'} ${subject} ${sid} `), reply, header, data);
    expectSameBytes(a, b);
  });
});
