// One traced message's event (nats-server's MsgTraceEvent, ADR-41): what happened to it on this server, built
// while it is routed and published once to its trace destination. Nothing of it outlives that publish, which
// waits only for a stream's hop (its store flush) when one took the message.
import type { BusTrace } from '@flotilla/jetstream';
import type { AcceptedEncoding } from '../system-account/response-encoding.js';
import { TRACE_DEST, TRACE_DEST_DISABLED, TRACE_HOP, withHeader } from './trace-headers.js';

/** nats-server's connection kinds, as trace events number them. */
export const CLIENT_KIND = 0;
export const ROUTER_KIND = 1;

export const NO_ECHO_ERROR = 'Not delivered because of no echo';

interface TraceEventBase {
  type: 'in' | 'sm' | 'se' | 'si' | 'js' | 'eg';
  ts: string;
}

export interface IngressEvent extends TraceEventBase {
  type: 'in';
  kind: number;
  cid: number;
  name?: string;
  acc: string;
  subj: string;
  error?: string;
}

export interface EgressEvent extends TraceEventBase {
  type: 'eg';
  kind: number;
  cid: number;
  name?: string;
  hop?: string;
  acc?: string;
  sub?: string;
  queue?: string;
  error?: string;
}

export interface SubjectMappingEvent extends TraceEventBase {
  type: 'sm';
  to: string;
}

export interface JetStreamEvent extends TraceEventBase {
  type: 'js';
  stream: string;
  subject?: string;
  nointerest?: boolean;
  error?: string;
}

export type TraceEvent = IngressEvent | EgressEvent | SubjectMappingEvent | JetStreamEvent;

export interface TraceIngress {
  kind: number;
  cid: number;
  /** the connection's name; left out when empty */
  name: string;
  account: string;
  /** the subject as published, before any mapping */
  subject: string;
}

export class MessageTrace implements BusTrace {
  private readonly events: TraceEvent[] = [];
  private readonly ingress: IngressEvent;
  private hops = 0;
  /** Parts still to report before the event goes out: the publish itself, and each stream that took it. */
  private pending = 1;
  private send: ((trace: MessageTrace) => void) | null = null;
  private streamHop: JetStreamEvent | null = null;

  constructor(
    /** the subject the event is published to, in the publisher's account */
    readonly dest: string,
    /** Nats-Trace-Only: trace what would happen, deliver nothing */
    readonly traceOnly: boolean,
    private readonly header: Record<string, string[]>,
    /** header block plus payload, as nats-server's msgsize */
    private readonly msgSize: number,
    from: TraceIngress,
    /** Nats-Trace-Hop of a message a peer routed here ('' at the origin) */
    private readonly hopIn = '',
    /** the message's Accept-Encoding, which compresses the event as nats-server does */
    readonly encoding: AcceptedEncoding = 'none',
  ) {
    this.ingress = { type: 'in', ts: now(), kind: from.kind, cid: from.cid, acc: from.account, subj: from.subject };
    if (from.name !== '') this.ingress.name = from.name;
    this.events.push(this.ingress);
  }

  ingressError(error: string): void {
    this.ingress.error = error;
  }

  mapped(to: string): void {
    this.events.push({ type: 'sm', ts: now(), to });
  }

  /** A delivery to a client's subscription (or a refusal of one, with `error`). */
  clientEgress(cid: number, name: string, subject: string, queue: string | null, error: string | null): void {
    const e: EgressEvent = { type: 'eg', ts: now(), kind: CLIENT_KIND, cid };
    if (name !== '') e.name = name;
    e.sub = subject;
    if (queue !== null) e.queue = queue;
    if (error !== null) e.error = error;
    this.events.push(e);
  }

  took(stream: string): void {
    this.streamHop = { type: 'js', ts: now(), stream };
    this.events.push(this.streamHop);
    this.pending++;
  }

  stored(subject: string, noInterest: boolean, error: string | null): void {
    const hop = this.streamHop;
    if (hop === null) return;
    hop.ts = now();
    hop.subject = subject;
    if (noInterest) hop.nointerest = true;
    if (error !== null) hop.error = error;
    this.partDone();
  }

  storedHeader(header: Buffer): Buffer {
    return withHeader(header, TRACE_DEST, TRACE_DEST_DISABLED);
  }

  /**
   * The message as it goes to one more peer: its Nats-Trace-Hop names this hop (`<hop in>.<n>`, or `<n>` at the
   * origin) and a route egress records it; the peer publishes its own event under that hop.
   */
  toPeer(peerName: string, headerBytes: number, message: Buffer): { headerBytes: number; message: Buffer } {
    this.hops++;
    const hop = this.hopIn === '' ? `${this.hops}` : `${this.hopIn}.${this.hops}`;
    this.events.push({ type: 'eg', ts: now(), kind: ROUTER_KIND, cid: 0, name: peerName, hop });
    const header = withHeader(message.subarray(0, headerBytes), TRACE_HOP, hop);
    return { headerBytes: header.length, message: Buffer.concat([header, message.subarray(headerBytes)]) };
  }

  /** The publish is routed: `send` publishes the event now, or once the stream that took it reported. */
  finish(send: (trace: MessageTrace) => void): void {
    this.send = send;
    this.partDone();
  }

  private partDone(): void {
    if (--this.pending === 0) this.send!(this);
  }

  /** The event as nats-server's JSON, with the sending server's `server` object. */
  toJson(server: Record<string, unknown>): string {
    const request: Record<string, unknown> = {};
    if (Object.keys(this.header).length > 0) request.header = this.header;
    if (this.msgSize > 0) request.msgsize = this.msgSize;
    const event: Record<string, unknown> = { server, request };
    if (this.hops > 0) event.hops = this.hops;
    event.events = this.events;
    return JSON.stringify(event);
  }
}

/** nats-server writes RFC 3339 times in UTC. */
function now(): string {
  return new Date().toISOString();
}
