// The operation of a `$JS.API.…` subject as a bounded label (`STREAM.CREATE`, `CONSUMER.MSG.NEXT`, …):
// names and other variable tokens are dropped, unknown shapes become `OTHER`.

/** Every operation label, longest first within a prefix so the most specific one matches. */
const OPERATIONS: readonly string[] = [
  'INFO',
  'STREAM.CREATE',
  'STREAM.UPDATE',
  'STREAM.DELETE',
  'STREAM.INFO',
  'STREAM.NAMES',
  'STREAM.LIST',
  'STREAM.PURGE',
  'STREAM.SNAPSHOT',
  'STREAM.RESTORE',
  'STREAM.MSG.GET',
  'STREAM.MSG.DELETE',
  'STREAM.LEADER.STEPDOWN',
  'STREAM.PEER.REMOVE',
  'CONSUMER.DURABLE.CREATE',
  'CONSUMER.CREATE',
  'CONSUMER.DELETE',
  'CONSUMER.INFO',
  'CONSUMER.NAMES',
  'CONSUMER.LIST',
  'CONSUMER.PAUSE',
  'CONSUMER.MSG.NEXT',
  'CONSUMER.LEADER.STEPDOWN',
  'DIRECT.GET',
  'META.LEADER.STEPDOWN',
  'META.PEER.REMOVE',
  'SERVER.REMOVE',
  'ACCOUNT.PURGE',
  'ACCOUNT.STREAM.MOVE',
];

const BY_TOKENS = OPERATIONS.map((op) => op.split('.'));

/** All labels apiOperationOf can return. */
export const API_OPERATION_LABELS: readonly string[] = [...OPERATIONS, 'OTHER'];

/** `$JS.API.STREAM.INFO.ORDERS` → `STREAM.INFO`; `$JS.<domain>.API.…` too. */
export function apiOperationOf(subject: string): string {
  const all = subject.split('.');
  const rest = all[1] === 'API' ? all.slice(2) : all[2] === 'API' ? all.slice(3) : [];
  let best = 'OTHER';
  let bestLength = 0;
  for (let i = 0; i < BY_TOKENS.length; i++) {
    const op = BY_TOKENS[i]!;
    if (op.length <= bestLength || op.length > rest.length) continue;
    let match = true;
    for (let t = 0; t < op.length && match; t++) match = op[t] === rest[t];
    if (match) {
      best = OPERATIONS[i]!;
      bestLength = op.length;
    }
  }
  return best;
}

/** Response types whose name does not spell the request's operation. */
const RESPONSE_OPERATION: Record<string, string> = { account_info: 'INFO', stream_remove_peer: 'STREAM.PEER.REMOVE' };
const KNOWN = new Set(API_OPERATION_LABELS);

/** `io.nats.jetstream.api.v1.stream_create_response` → `STREAM.CREATE` (the request's operation label). */
export function apiOperationOfResponseType(type: string): string {
  const m = /^io\.nats\.jetstream\.api\.v1\.(\w+?)_response$/.exec(type);
  if (m === null) return 'OTHER';
  const op = RESPONSE_OPERATION[m[1]!] ?? m[1]!.toUpperCase().replace(/_/g, '.');
  return KNOWN.has(op) ? op : 'OTHER';
}
