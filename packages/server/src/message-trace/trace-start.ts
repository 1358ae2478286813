// Whether a published message with a Nats-Trace-Dest header is traced, as nats-server's initMsgTrace decides.
import { isValidPublishSubject } from '@flotilla/protocol';
import { MessageTrace, type TraceIngress } from './message-trace.js';
import { acceptedEncoding } from '../system-account/response-encoding.js';
import { TRACE_DEST, TRACE_DEST_DISABLED, TRACE_HOP, TRACE_ONLY, TRACE_ORIGIN_ACCOUNT, isTraceOnly, traceHeaderMap } from './trace-headers.js';

/** Delivered as any message: no trace. */
export const UNTRACED = 0;
/** Neither traced nor delivered: a trace-only message whose trace cannot be made. */
export const DROPPED = 1;
export type TraceStart = MessageTrace | typeof UNTRACED | typeof DROPPED | { deniedDest: string };

/**
 * `mayPublish`: the connection's publish permissions, which the destination must pass too (a denied one is
 * answered as a publish violation on it, and the message is not processed).
 */
export function startTrace(
  message: Buffer,
  headerBytes: number,
  from: TraceIngress,
  mayPublish: ((subject: string) => boolean) | null,
  /** from a peer: its Nats-Trace-Hop names this node's hop (a client's is not read, as nats-server) */
  routed = false,
): TraceStart {
  const header = traceHeaderMap(message.subarray(0, headerBytes));
  const dest = header?.[TRACE_DEST]?.[0];
  if (header === null || dest === undefined || dest === TRACE_DEST_DISABLED) return UNTRACED;
  const traceOnly = isTraceOnly(header[TRACE_ONLY]?.[0]);
  // A message from a pre-2.11 tracer is not traced again (nats-server logs it; trace-only ones go nowhere).
  if (header[TRACE_ORIGIN_ACCOUNT] !== undefined) return traceOnly ? DROPPED : UNTRACED;
  if (!isValidPublishSubject(dest)) return traceOnly ? DROPPED : UNTRACED;
  // nats-server keeps a tracer off the gateway reply and Raft subjects, whatever its permissions
  if (dest.startsWith('_GR_.') || dest.startsWith('$NRG.') || (mayPublish !== null && !mayPublish(dest))) return { deniedDest: dest };
  const block = message.subarray(0, headerBytes);
  return new MessageTrace(dest, traceOnly, header, message.length, from, routed ? (header[TRACE_HOP]?.[0] ?? '') : '', acceptedEncoding(block));
}
