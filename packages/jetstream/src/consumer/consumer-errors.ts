// The consumer API's errors by the names its call sites use: each a view onto one entry of the error table
// (api/js-error-table.ts), which holds nats-server's codes and descriptions.
import { jsError } from '../api/js-error-table.js';

export const consumerErrors = {
  invalidJson: () => jsError('JSInvalidJSONErr'),
  streamNotFound: () => jsError('JSStreamNotFoundErr'),
  streamMismatch: () => jsError('JSStreamMismatchErr'),
  notFound: () => jsError('JSConsumerNotFoundErr'),
  configRequired: () => jsError('JSConsumerConfigRequiredErr'),
  nameExists: () => jsError('JSConsumerNameExistErr'),
  alreadyExists: () => jsError('JSConsumerAlreadyExists'),
  doesNotExist: () => jsError('JSConsumerDoesNotExist'),
  durableNotInSubject: () => jsError('JSConsumerDurableNameNotInSubjectErr'),
  durableNotSet: () => jsError('JSConsumerDurableNameNotSetErr'),
  durableMismatch: () => jsError('JSConsumerDurableNameNotMatchSubjectErr'),
  ephemeralWithDurable: () => jsError('JSConsumerEphemeralWithDurableNameErr'),
  pathSeparators: () => jsError('JSConsumerNameContainsPathSeparatorsErr'),
  multipleFiltersNotAllowed: () => jsError('JSConsumerMultipleFiltersNotAllowed'),
  filterMismatch: () => jsError('JSConsumerCreateFilterSubjectMismatchErr'),
  replicasNotSupported: () => jsError('JSStreamReplicasNotSupportedErr'),
  /** LEADER.STEPDOWN of a consumer on a single node. */
  clusteringRequired: () => jsError('JSClusterRequiredErr'),
  replicasExceedStream: () => jsError('JSConsumerReplicasExceedsStream'),
  replicasNegative: () => jsError('JSReplicasCountCannotBeNegative'),
  maxDeliverBackoff: () => jsError('JSConsumerMaxDeliverBackoffErr'),
  descriptionTooLong: (max: number) => jsError('JSConsumerDescriptionTooLongErrF', { max }),
  deliverToWildcards: () => jsError('JSConsumerDeliverToWildcardsErr'),
  invalidDeliverSubject: () => jsError('JSConsumerInvalidDeliverSubject'),
  deliverCycle: () => jsError('JSConsumerDeliverCycleErr'),
  pushMaxWaiting: () => jsError('JSConsumerPushMaxWaitingErr'),
  maxPendingAckPolicy: () => jsError('JSConsumerMaxPendingAckPolicyRequiredErr'),
  smallHeartbeat: () => jsError('JSConsumerSmallHeartbeatErr'),
  pullRequiresAck: () => jsError('JSConsumerPullRequiresAckErr'),
  pullWithRateLimit: () => jsError('JSConsumerPullWithRateLimitErr'),
  maxWaitingNegative: () => jsError('JSConsumerMaxWaitingNegativeErr'),
  hbRequiresPush: () => jsError('JSConsumerHBRequiresPushErr'),
  fcRequiresPush: () => jsError('JSConsumerFCRequiresPushErr'),
  maxBatchNegative: () => jsError('JSConsumerMaxRequestBatchNegativeErr'),
  maxExpiresTooSmall: () => jsError('JSConsumerMaxRequestExpiresTooSmall'),
  duplicateFilters: () => jsError('JSConsumerDuplicateFilterSubjects'),
  badSubject: () => jsError('JSStreamInvalidConfigF', { err: 'invalid subject' }),
  emptyFilter: () => jsError('JSConsumerEmptyFilter'),
  overlappingFilters: () => jsError('JSConsumerOverlappingSubjectFilters'),
  filterNotSubset: () => jsError('JSConsumerFilterNotSubsetErr'),
  invalidPolicy: (reason: string) => jsError('JSConsumerInvalidPolicyErrF', { err: reason }),
  invalidSampling: (detail: string) => jsError('JSConsumerInvalidSamplingErrF', { err: detail }),
  fcNeedsHeartbeats: () => jsError('JSConsumerWithFlowControlNeedsHeartbeats'),
  durableAndNameMismatch: () => jsError('JSConsumerCreateDurableAndNameMismatch'),
  invalidName: () =>
    jsError('JSStreamInvalidConfigF', { err: "consumer name can not contain '.', '*', '>', '\\', '/'" }),
  invalidDurableName: () =>
    jsError('JSStreamInvalidConfigF', { err: "consumer durable name can not contain '.', '*', '>', '\\', '/'" }),
  badDurableName: () => jsError('JSConsumerBadDurableNameErr'),
  nameTooLong: (max: number) => jsError('JSConsumerNameTooLongErrF', { max }),
  maxConsumers: () => jsError('JSMaximumConsumersLimitErr'),
  wqRequiresExplicitAck: () => jsError('JSConsumerWQRequiresExplicitAckErr'),
  wqMultipleUnfiltered: () => jsError('JSConsumerWQMultipleUnfilteredErr'),
  wqNotUnique: () => jsError('JSConsumerWQConsumerNotUniqueErr'),
  wqNotDeliverAll: () => jsError('JSConsumerWQConsumerNotDeliverAllErr'),
  replicasMustMatchStream: () => jsError('JSConsumerReplicasShouldMatchStream'),
  metadataTooLong: () => jsError('JSConsumerMetadataLengthErrF', { limit: '128KB' }),
  existingActive: () => jsError('JSConsumerExistingActiveErr'),
  /** nats-server wraps non-API errors from create/update as 500/10012 with the reason as text. */
  createFailed: (reason: string) => jsError('JSConsumerCreateErrF', { err: reason }),
  inactiveThresholdExcess: (limitNs: number) =>
    jsError('JSConsumerInactiveThresholdExcess', { limit: goDuration(limitNs) }),
  maxAckPendingExcess: (limit: number) => jsError('JSConsumerMaxPendingAckExcessErrF', { limit }),
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
