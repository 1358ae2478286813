// A traced message's JetStream hop (ADR-41) at the publish rules, shared by the single-node and replicated writers.
import type { BusTrace } from '../message-bus.js';
import type { PublishRuling } from './publish-rules.js';

/**
 * A traced message's ruling (nats-server's processJetStreamMsg): an error or Nats-Trace-Only ends its `js` hop
 * now (false: go no further when trace-only); a stored one reports once its flush is done.
 */
export function tracedRuling(trace: BusTrace, subject: string, ruling: PublishRuling): boolean {
  if (ruling.kind === 'reject') trace.stored(subject, false, `${ruling.error.description} (${ruling.error.errCode})`);
  else if (ruling.kind === 'duplicate') trace.stored(subject, false, 'msgid is duplicate');
  else if (ruling.kind === 'drop') trace.stored(subject, false, null);
  else if (ruling.kind === 'skip' || trace.traceOnly) trace.stored(subject, ruling.kind === 'skip', null);
  else return true;
  return !trace.traceOnly;
}
