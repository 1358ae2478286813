// The consumer API's errors, each nats-server's {code, err_code, description} verbatim.
import { ApiError } from '../api/api-error.js';

export const consumerErrors = {
  invalidJson: () => new ApiError(400, 10025, 'invalid JSON'),
  streamNotFound: () => new ApiError(404, 10059, 'stream not found'),
  streamMismatch: () => new ApiError(400, 10056, 'stream name in subject does not match request'),
  notFound: () => new ApiError(404, 10014, 'consumer not found'),
  configRequired: () => new ApiError(400, 10078, 'consumer config required'),
  nameExists: () => new ApiError(400, 10013, 'consumer name already in use'),
  alreadyExists: () => new ApiError(400, 10148, 'consumer already exists'),
  doesNotExist: () => new ApiError(400, 10149, 'consumer does not exist'),
  durableNotInSubject: () => new ApiError(400, 10016, 'consumer expected to be durable but no durable name set in subject'),
  durableNotSet: () => new ApiError(400, 10018, 'consumer expected to be durable but a durable name was not set'),
  durableMismatch: () => new ApiError(400, 10017, 'consumer name in subject does not match durable name in request'),
  ephemeralWithDurable: () =>
    new ApiError(400, 10020, 'consumer expected to be ephemeral but a durable name was set in request'),
  pathSeparators: () => new ApiError(400, 10127, 'Consumer name can not contain path separators'),
  multipleFiltersNotAllowed: () =>
    new ApiError(400, 10137, 'consumer with multiple subject filters cannot use subject based API'),
  filterMismatch: () =>
    new ApiError(400, 10131, 'Consumer create request did not match filtered subject from create subject'),
  replicasNotSupported: () => new ApiError(500, 10074, 'replicas > 1 not supported in non-clustered mode'),
  replicasExceedStream: () => new ApiError(400, 10126, 'consumer config replica count exceeds parent stream'),
  replicasNegative: () => new ApiError(400, 10133, 'replicas count cannot be negative'),
  maxDeliverBackoff: () => new ApiError(400, 10116, 'max deliver is required to be > length of backoff values'),
  descriptionTooLong: (max: number) =>
    new ApiError(400, 10107, `consumer description is too long, maximum allowed is ${max}`),
  deliverToWildcards: () => new ApiError(400, 10079, 'consumer deliver subject has wildcards'),
  invalidDeliverSubject: () => new ApiError(400, 10112, 'invalid push consumer deliver subject'),
  deliverCycle: () => new ApiError(400, 10081, 'consumer deliver subject forms a cycle'),
  pushMaxWaiting: () => new ApiError(400, 10080, 'consumer in push mode can not set max waiting'),
  maxPendingAckPolicy: () => new ApiError(400, 10082, 'consumer requires ack policy for max ack pending'),
  smallHeartbeat: () => new ApiError(400, 10083, 'consumer idle heartbeat needs to be >= 100ms'),
  pullRequiresAck: () =>
    new ApiError(400, 10084, 'consumer in pull mode requires explicit ack policy on workqueue stream'),
  pullWithRateLimit: () => new ApiError(400, 10086, 'consumer in pull mode can not have rate limit set'),
  maxWaitingNegative: () => new ApiError(400, 10087, 'consumer max waiting needs to be positive'),
  hbRequiresPush: () => new ApiError(400, 10088, 'consumer idle heartbeat requires a push based consumer'),
  fcRequiresPush: () => new ApiError(400, 10089, 'consumer flow control requires a push based consumer'),
  maxBatchNegative: () => new ApiError(400, 10114, 'consumer max request batch needs to be > 0'),
  maxExpiresTooSmall: () => new ApiError(400, 10115, 'consumer max request expires needs to be >= 1ms'),
  duplicateFilters: () =>
    new ApiError(400, 10136, 'consumer cannot have both FilterSubject and FilterSubjects specified'),
  badSubject: () => new ApiError(500, 10052, 'invalid subject'),
  emptyFilter: () => new ApiError(400, 10139, 'consumer filter in FilterSubjects cannot be empty'),
  overlappingFilters: () => new ApiError(400, 10138, 'consumer subject filters cannot overlap'),
  filterNotSubset: () =>
    new ApiError(400, 10093, 'consumer filter subject is not a valid subset of the interest subjects'),
  invalidPolicy: (reason: string) => new ApiError(400, 10094, reason),
  invalidSampling: (detail: string) =>
    new ApiError(400, 10095, `failed to parse consumer sampling configuration: ${detail}`),
  fcNeedsHeartbeats: () => new ApiError(400, 10108, 'consumer with flow control also needs heartbeats'),
  durableAndNameMismatch: () =>
    new ApiError(400, 10132, 'Consumer Durable and Name have to be equal if both are provided'),
  invalidName: () => new ApiError(500, 10052, "consumer name can not contain '.', '*', '>', '\\', '/'"),
  invalidDurableName: () => new ApiError(500, 10052, "consumer durable name can not contain '.', '*', '>', '\\', '/'"),
  badDurableName: () => new ApiError(400, 10103, "durable name can not contain '.', '*', '>'"),
  nameTooLong: (max: number) => new ApiError(400, 10102, `consumer name is too long, maximum allowed is ${max}`),
  maxConsumers: () => new ApiError(400, 10026, 'maximum consumers limit reached'),
  wqRequiresExplicitAck: () => new ApiError(400, 10098, 'workqueue stream requires explicit ack'),
  wqMultipleUnfiltered: () =>
    new ApiError(400, 10099, 'multiple non-filtered consumers not allowed on workqueue stream'),
  wqNotUnique: () => new ApiError(400, 10100, 'filtered consumer not unique on workqueue stream'),
  wqNotDeliverAll: () => new ApiError(400, 10101, 'consumer must be deliver all on workqueue stream'),
  replicasMustMatchStream: () =>
    new ApiError(400, 10134, "consumer config replicas must match interest retention stream's replicas"),
  metadataTooLong: () => new ApiError(400, 10135, 'consumer metadata exceeds maximum size of 128KB'),
  existingActive: () => new ApiError(400, 10105, 'consumer already exists and is still active'),
  /** nats-server wraps non-API errors from create/update as 500/10012 with the reason as text. */
  createFailed: (reason: string) => new ApiError(500, 10012, reason),
  inactiveThresholdExcess: (limitNs: number) =>
    new ApiError(400, 10153, `consumer inactive threshold exceeds system limit of ${goDuration(limitNs)}`),
  maxAckPendingExcess: (limit: number) =>
    new ApiError(400, 10121, `consumer max ack pending exceeds system limit of ${limit}`),
};

/** Go's time.Duration String() for whole nanoseconds (e.g. 5s, 1m30s, 1.5s, 250ms). */
export function goDuration(ns: number): string {
  if (ns === 0) return '0s';
  const neg = ns < 0;
  let v = Math.abs(ns);
  let out: string;
  if (v < 1e3) out = `${v}ns`;
  else if (v < 1e6) out = `${trimFraction(v / 1e3)}µs`;
  else if (v < 1e9) out = `${trimFraction(v / 1e6)}ms`;
  else {
    const h = Math.floor(v / 3.6e12);
    v -= h * 3.6e12;
    const m = Math.floor(v / 6e10);
    v -= m * 6e10;
    const s = trimFraction(v / 1e9);
    out = h > 0 ? `${h}h${m}m${s}s` : m > 0 ? `${m}m${s}s` : `${s}s`;
  }
  return neg ? `-${out}` : out;
}

function trimFraction(x: number): string {
  return Number.isInteger(x) ? String(x) : String(Number(x.toFixed(9)));
}
