// The `$JS.API` of an account without JetStream on a server that has it: nats-server imports the API into
// every account, and each handler of an account without JetStream answers 503 10039 "JetStream not enabled
// for account" with its own response type. Pulls and direct gets are the stream's and consumer's own
// subscriptions there, so nobody answers them; nor a subject no endpoint has, nor one a single node does not
// serve (META.LEADER.STEPDOWN).
import type { BusMessage, MessageBus } from '../message-bus.js';
import { endpointOf, type ApiEndpoint } from './api-endpoints.js';
import { JsErrors } from './api-errors.js';
import { ERROR_EXTRA } from './stream-api.js';
import { requiredApiLevelError } from './api-level.js';

const CONSUMER_PAGE_EXTRA = { total: 0, offset: 0, limit: 0, consumers: [] };

function answers(endpoint: ApiEndpoint): boolean {
  if (endpoint.outsideApiStats === true) return false;
  return endpoint.scope === 'consumer' || endpoint.serve !== undefined || !endpoint.implemented;
}

function extraOf(endpoint: ApiEndpoint): object | undefined {
  if (endpoint.operation === 'CONSUMER.NAMES' || endpoint.operation === 'CONSUMER.LIST') return CONSUMER_PAGE_EXTRA;
  return ERROR_EXTRA[endpoint.responseType];
}

function answer(bus: MessageBus, msg: BusMessage): void {
  if (msg.reply === null) return;
  const all = msg.subject.split('.');
  const endpoint = endpointOf(all[1] === 'API' ? all.slice(2) : all.slice(3));
  if (endpoint === undefined || !answers(endpoint)) return;
  // 2.14 checks the requested API level before the account.
  const error = requiredApiLevelError(msg.header) ?? JsErrors.notEnabledForAccount();
  const body = { type: endpoint.responseType, error: error.toJSON(), ...extraOf(endpoint) };
  bus.publish(msg.reply, null, null, Buffer.from(JSON.stringify(body)));
}

/** Answers the account's `$JS.API.>` (and `$JS.<domain>.API.>`) with 10039; returns the unsubscribe. */
export function serveJetStreamNotEnabled(bus: MessageBus, domain: string | undefined): () => void {
  const handler = (msg: BusMessage): void => answer(bus, msg);
  const undo = [bus.subscribe('$JS.API.>', handler)];
  if (domain) undo.push(bus.subscribe(`$JS.${domain}.API.>`, handler));
  return () => {
    for (const u of undo) u();
  };
}
