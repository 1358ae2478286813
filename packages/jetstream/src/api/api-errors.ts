// Every JetStream API error this package sends, with nats-server's code, err_code and description
// (reference jetstream-api.md §3). One table, so a description is never spelled twice.
import { ApiError } from './api-error.js';

export const JsErrors = {
  badRequest: () => new ApiError(400, 10003, 'bad request'),
  insufficientResources: () => new ApiError(503, 10023, 'insufficient resources'),
  memoryResourcesExceeded: () => new ApiError(500, 10028, 'insufficient memory resources available'),
  storageResourcesExceeded: () => new ApiError(500, 10047, 'insufficient storage resources available'),
  invalidJson: () => new ApiError(400, 10025, 'invalid JSON'),
  noMessageFound: () => new ApiError(404, 10037, 'no message found'),
  /** MSG.DELETE of an interior sequence that is already gone. */
  sequenceNotFound: (seq: number) => new ApiError(400, 10043, `sequence ${seq} not found`),
  notEnabledForAccount: () => new ApiError(503, 10039, 'JetStream not enabled for account'),
  clusteringRequired: () => new ApiError(503, 10010, 'JetStream clustering support required'),
  /** 10052: the reason is the description, e.g. `maximum replicas is 5`. */
  streamInvalidConfig: (reason: string) => new ApiError(500, 10052, reason),
  messageSizeExceeds: () => new ApiError(400, 10054, 'message size exceeds maximum allowed'),
  streamNameMismatch: () => new ApiError(400, 10056, 'stream name in subject does not match request'),
  /** 10057: `no message found`, or `message delete not permitted` with deny_delete. */
  streamMsgDeleteFailed: (reason: string) => new ApiError(500, 10057, reason),
  streamNameInUse: () => new ApiError(400, 10058, 'stream name already in use with a different configuration'),
  streamNotFound: () => new ApiError(404, 10059, 'stream not found'),
  expectedStreamMismatch: () => new ApiError(400, 10060, 'expected stream does not match'),
  subjectsOverlap: () => new ApiError(400, 10065, 'subjects overlap with an existing stream'),
  wrongLastMsgId: (actual: string) => new ApiError(400, 10070, `wrong last msg ID: ${actual}`),
  wrongLastSequence: (actual: number) => new ApiError(400, 10071, `wrong last sequence: ${actual}`),
  replicasNotSupported: () => new ApiError(500, 10074, 'replicas > 1 not supported in non-clustered mode'),
  /** 10077: the store's text, e.g. `maximum messages exceeded`. */
  storeFailed: (text: string) => new ApiError(503, 10077, text),
  headersTooLarge: () => new ApiError(400, 10097, 'header size exceeds maximum allowed of 64k'),
  streamSealed: () => new ApiError(400, 10109, 'invalid operation on sealed stream'),
  /** 10110: `stream purge not permitted` with deny_purge. */
  streamPurgeFailed: (reason: string) => new ApiError(500, 10110, reason),
  rollupNotPermitted: () => new ApiError(500, 10111, 'rollup not permitted'),
  nameHasPathSeparators: () => new ApiError(400, 10128, 'Stream name can not contain path separators'),
  notEmptyRequest: () => new ApiError(400, 10038, 'expected an empty request payload'),
  /** nats-server 2.14 decodes API requests strictly (DisallowUnknownFields): Go's text after `invalid JSON: `. */
  unknownJsonField: (field: string) => new ApiError(400, 10025, `invalid JSON: json: unknown field "${field}"`),
  /** 10052, naming a 2.14 config field Flotilla does not implement yet (stream/unsupported-config-fields.ts). */
  configFieldUnsupported: (kind: 'stream' | 'consumer', field: string) =>
    new ApiError(500, 10052, `${kind} configuration field '${field}' is not supported`),
  /** 10052, naming a value of a 2.14 enum field Flotilla does not implement yet. */
  configValueUnsupported: (kind: 'stream' | 'consumer', field: string, value: string) =>
    new ApiError(500, 10052, `${kind} configuration field '${field}' value '${value}' is not supported`),
  messageTtlDisabled: () => new ApiError(400, 10166, 'per-message TTL is disabled'),
  messageIncrDisabled: () => new ApiError(400, 10168, 'message counters is disabled'),
  messageIncrInvalid: () => new ApiError(400, 10171, 'message counter increment is invalid'),
  atomicPublishDisabled: () => new ApiError(400, 10174, 'atomic publish is disabled'),
  messageSchedulesDisabled: () => new ApiError(400, 10188, 'message schedules is disabled'),
  expectedLastSubjectSeqMissing: () => new ApiError(400, 10193, 'missing sequence for expected last sequence per subject'),
  messageSchedulesSchedulerInvalid: () => new ApiError(400, 10212, 'message schedules invalid scheduler'),
  requiredApiLevel: () => new ApiError(412, 10185, 'JetStream minimum api level required'),
  consumerPriorityGroupWithPolicyNone: () => new ApiError(400, 10196, 'consumer can not have priority groups when policy is none'),
  consumerPinnedTtlWithPolicyNone: () => new ApiError(400, 10197, 'PinnedTTL cannot be set when PriorityPolicy is none'),
} as const;
