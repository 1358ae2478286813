// nats-server's decodeBool for a monitoring query parameter: strconv.ParseBool's spellings; anything else is a
// 400 with nats-server's text.

const TRUE = new Set(['1', 't', 'T', 'TRUE', 'true', 'True']);
const FALSE = new Set(['0', 'f', 'F', 'FALSE', 'false', 'False']);

/** A query parameter nats-server refuses; answered 400 with `message`. */
export class QueryParamError extends Error {
  readonly code = 'BAD_QUERY_PARAM';
}

/** `param`'s value as a bool (false when absent or empty); throws QueryParamError otherwise. */
export function queryBool(params: URLSearchParams, param: string): boolean {
  const v = params.get(param) ?? '';
  if (v === '' || FALSE.has(v)) return false;
  if (TRUE.has(v)) return true;
  throw new QueryParamError(`Error decoding boolean for '${param}': strconv.ParseBool: parsing ${JSON.stringify(v)}: invalid syntax`);
}
