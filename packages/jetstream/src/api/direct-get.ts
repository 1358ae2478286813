// `$JS.API.DIRECT.GET.<S>[.<subject…>]`: stored messages themselves, with the stream's headers appended to
// their own (reference §6); batches and multi_last end with the 204 EOB status. Status replies instead of
// JSON errors.
import type { BusMessage, MessageBus } from '../message-bus.js';
import type { Stream } from '../stream/stream.js';
import { directGetBySequence } from './direct-get-batch.js';
import { directGetMultiLast } from './direct-get-multi-last.js';
import { parseDirectGetRequest, parseLastBySubjectRequest } from './direct-get-request.js';

const EMPTY = Buffer.alloc(0);

/** Answers a direct get on `stream` (tokens after `$JS.API`: DIRECT, GET, S, subject…). */
export async function directGet(bus: MessageBus, stream: Stream, tokens: readonly string[], msg: BusMessage): Promise<void> {
  const reply = msg.reply;
  if (reply === null) return;
  const req = tokens.length > 3 ? parseLastBySubjectRequest(tokens.slice(3).join('.'), msg.data) : parseDirectGetRequest(msg.data);
  if (Buffer.isBuffer(req)) return bus.publish(reply, null, req, EMPTY);
  if (req.multiLast.length > 0) return directGetMultiLast(bus, stream, req, reply);
  return directGetBySequence(bus, stream, req, reply);
}
