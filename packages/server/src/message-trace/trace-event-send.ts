// The one publish a trace costs: its event, to its destination in the account it was traced in, compressed
// when the traced message asked with Accept-Encoding (nats-server's internal send does the same).
import type { MessageRouter } from '../message-router.js';
import { encodeAnswer } from '../system-account/response-encoding.js';
import type { MessageTrace } from './message-trace.js';

export function sendTraceEvent(router: MessageRouter, trace: MessageTrace, serverInfo: Record<string, unknown>): void {
  const { header, body } = encodeAnswer(trace.toJson(serverInfo), trace.encoding);
  router.publishParts(null, trace.dest, null, header, body);
}
