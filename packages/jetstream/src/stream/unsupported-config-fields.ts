// The nats-server 2.14 stream and consumer config fields Flotilla does not implement yet. A request that asks
// for one of them (a value other than Go's zero value or the enum's default) is refused by name rather than
// stored and ignored; a request that sets one to its default (`"allow_msg_ttl": false`, `"persist_mode":
// "default"`) asks for nothing and passes. The issue that implements a field deletes its row.
//
// The refusal is nats-server's invalid-config error, 500 / 10052 (JSStreamInvalidConfigF, `{err}`; 2.14's
// checkConsumerCfg also answers consumer config values it will not take with 10052), its description:
//   stream configuration field '<field>' is not supported
//   consumer configuration field '<field>' is not supported
//   <kind> configuration field '<field>' value '<value>' is not supported      (an enum value, e.g. ack_policy)
// A wrong JSON type is `invalid JSON` (10025) first, as Go's decoder fails before any check runs.
import type { ApiError } from '../api/api-error.js';
import { JsErrors } from '../api/api-errors.js';
import { isGoInt64 } from '../api/request-body.js';

/** Where the field sits: a stream config (StreamConfigRequest), a consumer config, a CONSUMER.CREATE request. */
export type ConfigScope = 'stream' | 'consumer' | 'consumer request';

/** The Go type 2.14 decodes the field into; decides the type check and the value that asks for nothing. */
export type FieldShape =
  | { type: 'bool' }
  /** time.Duration or an integer. */
  | { type: 'int' }
  /** A pointer to a struct: any object asks for the feature. */
  | { type: 'object' }
  | { type: 'array'; items: 'string' | 'object' }
  /** *time.Time: the zero time, or any time already past (not paused), asks for nothing. */
  | { type: 'time' }
  /** A string enum: `values` all 2.14 decodes, `inert` the ones that ask for nothing. */
  | { type: 'enum'; values: readonly string[]; inert: readonly string[] };

export interface UnsupportedConfigField {
  readonly scope: ConfigScope;
  readonly field: string;
  readonly shape: FieldShape;
  /** The Flotilla issue that implements it (and deletes this row). */
  readonly issue: number;
}

const bool = { type: 'bool' } as const;
const object = { type: 'object' } as const;

/** In nats-server's struct order, so the first refused field of a request is the one named. */
export const UNSUPPORTED_CONFIG_FIELDS: readonly UnsupportedConfigField[] = [
  {
    scope: 'consumer',
    field: 'ack_policy',
    shape: { type: 'enum', values: ['none', 'all', 'explicit', 'flow_control'], inert: ['none', 'all', 'explicit'] },
    issue: 19,
  },
  { scope: 'consumer', field: 'sourcing', shape: bool, issue: 19 },
];

const ROWS_BY_SCOPE: ReadonlyMap<ConfigScope, readonly UnsupportedConfigField[]> = new Map(
  (['stream', 'consumer', 'consumer request'] as const).map((s) => [s, UNSUPPORTED_CONFIG_FIELDS.filter((r) => r.scope === s)]),
);

/** Go's zero time.Time, as clients send it for "not paused". */
const ZERO_TIME_MS = Date.parse('0001-01-01T00:00:00Z');

type Verdict = 'inert' | 'asks' | 'bad type';

function judge(shape: FieldShape, v: unknown): Verdict {
  switch (shape.type) {
    case 'bool':
      return typeof v !== 'boolean' ? 'bad type' : v ? 'asks' : 'inert';
    case 'int':
      return !isGoInt64(v) ? 'bad type' : v !== 0 ? 'asks' : 'inert';
    case 'object':
      return typeof v !== 'object' || Array.isArray(v) ? 'bad type' : 'asks';
    case 'array': {
      if (!Array.isArray(v)) return 'bad type';
      const ok =
        shape.items === 'string'
          ? v.every((x) => typeof x === 'string')
          : v.every((x) => x === null || (typeof x === 'object' && !Array.isArray(x)));
      return !ok ? 'bad type' : v.length > 0 ? 'asks' : 'inert';
    }
    case 'time': {
      const ms = typeof v === 'string' ? Date.parse(v) : Number.NaN;
      return Number.isNaN(ms) ? 'bad type' : ms !== ZERO_TIME_MS && ms > Date.now() ? 'asks' : 'inert';
    }
    case 'enum':
      if (typeof v !== 'string' || !shape.values.includes(v)) return 'bad type';
      return shape.inert.includes(v) ? 'inert' : 'asks';
  }
}

/**
 * The error for the first unimplemented field `o` asks for (or sets with a wrong type), or null. `o` is the
 * decoded JSON object of the scope: the stream config request, the consumer config, the create request.
 */
export function unsupportedConfigFieldError(scope: ConfigScope, o: Record<string, unknown>): ApiError | null {
  const kind = scope === 'stream' ? 'stream' : 'consumer';
  for (const row of ROWS_BY_SCOPE.get(scope)!) {
    const v = o[row.field];
    if (v === undefined || v === null) continue;
    const verdict = judge(row.shape, v);
    if (verdict === 'inert') continue;
    if (verdict === 'bad type') return JsErrors.invalidJson();
    return row.shape.type === 'enum'
      ? JsErrors.configValueUnsupported(kind, row.field, v as string)
      : JsErrors.configFieldUnsupported(kind, row.field);
  }
  return null;
}
