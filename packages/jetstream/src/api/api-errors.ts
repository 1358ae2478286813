// The stream API's errors by the names its call sites use: each a view onto one entry of the error table
// (js-error-table.ts), which holds the codes and descriptions.
import { invalidJsonWithReason, jsError } from './js-error-table.js';

export const JsErrors = {
  badRequest: () => jsError('JSBadRequestErr'),
  insufficientResources: () => jsError('JSInsufficientResourcesErr'),
  memoryResourcesExceeded: () => jsError('JSMemoryResourcesExceededErr'),
  storageResourcesExceeded: () => jsError('JSStorageResourcesExceededErr'),
  accountResourcesExceeded: () => jsError('JSAccountResourcesExceededErr'),
  maximumStreams: () => jsError('JSMaximumStreamsLimitErr'),
  /** 10120: tiered limits without one for the stream's replica count. */
  noLimits: () => jsError('JSNoLimitsErr'),
  maximumConsumers: () => jsError('JSMaximumConsumersLimitErr'),
  streamMaxBytesRequired: () => jsError('JSStreamMaxBytesRequired'),
  streamMaxBytesExceedsAccount: () => jsError('JSStreamMaxStreamBytesExceeded'),
  invalidJson: () => jsError('JSInvalidJSONErr'),
  noMessageFound: () => jsError('JSNoMessageFoundErr'),
  /** MSG.DELETE of an interior sequence that is already gone. */
  sequenceNotFound: (seq: number) => jsError('JSSequenceNotFoundErrF', { seq }),
  notEnabledForAccount: () => jsError('JSNotEnabledForAccountErr'),
  clusteringRequired: () => jsError('JSClusterRequiredErr'),
  /** 10052: the reason is the description, e.g. `maximum replicas is 5`. */
  streamInvalidConfig: (reason: string) => jsError('JSStreamInvalidConfigF', { err: reason }),
  /** 10049: an unexpected failure of a stream API call, its (path-free) text as the description. */
  streamCreateFailed: (reason: string) => jsError('JSStreamCreateErrF', { err: reason }),
  messageSizeExceeds: () => jsError('JSStreamMessageExceedsMaximumErr'),
  streamNameMismatch: () => jsError('JSStreamMismatchErr'),
  /** 10057: `no message found`, or `message delete not permitted` with deny_delete. */
  streamMsgDeleteFailed: (reason: string) => jsError('JSStreamMsgDeleteFailedF', { err: reason }),
  streamNameInUse: () => jsError('JSStreamNameExistErr'),
  streamNameExistRestoreFailed: () => jsError('JSStreamNameExistRestoreFailedErr'),
  streamNotFound: () => jsError('JSStreamNotFoundErr'),
  expectedStreamMismatch: () => jsError('JSStreamNotMatchErr'),
  subjectsOverlap: () => jsError('JSStreamSubjectOverlapErr'),
  wrongLastMsgId: (actual: string) => jsError('JSStreamWrongLastMsgIDErrF', { id: actual }),
  wrongLastSequence: (actual: number) => jsError('JSStreamWrongLastSequenceErrF', { seq: actual }),
  replicasNotSupported: () => jsError('JSStreamReplicasNotSupportedErr'),
  /** 10077: the store's text, e.g. `maximum messages exceeded`. */
  storeFailed: (text: string) => jsError('JSStreamStoreFailedF', { err: text }),
  headersTooLarge: () => jsError('JSStreamHeaderExceedsMaximumErr'),
  streamSealed: () => jsError('JSStreamSealedErr'),
  /** 10110: `stream purge not permitted` with deny_purge. */
  streamPurgeFailed: (reason: string) => jsError('JSStreamPurgeFailedF', { err: reason }),
  rollupNotPermitted: () => jsError('JSStreamRollupFailedF', { err: 'rollup not permitted' }),
  nameHasPathSeparators: () => jsError('JSStreamNameContainsPathSeparatorsErr'),
  notEmptyRequest: () => jsError('JSNotEmptyRequestErr'),
  /**
   * An endpoint nats-server serves and Flotilla does not yet, named, e.g. `STREAM.SNAPSHOT is not implemented
   * by flotilla`. nats-server has no such error: 10051 is its general one with a free text.
   */
  notImplemented: (operation: string) => jsError('JSStreamGeneralErrorF', { err: `${operation} is not implemented by flotilla` }),
  /** nats-server 2.14 decodes API requests strictly (DisallowUnknownFields): Go's text after `invalid JSON: `. */
  unknownJsonField: (field: string) => invalidJsonWithReason(`json: unknown field "${field}"`),
  /** 10052, naming a 2.14 config field Flotilla does not implement yet (stream/unsupported-config-fields.ts). */
  configFieldUnsupported: (kind: 'stream' | 'consumer', field: string) =>
    jsError('JSStreamInvalidConfigF', { err: `${kind} configuration field '${field}' is not supported` }),
  /** 10052, naming a value of a 2.14 enum field Flotilla does not implement yet. */
  configValueUnsupported: (kind: 'stream' | 'consumer', field: string, value: string) =>
    jsError('JSStreamInvalidConfigF', { err: `${kind} configuration field '${field}' value '${value}' is not supported` }),
  messageTtlDisabled: () => jsError('JSMessageTTLDisabledErr'),
  messageTtlInvalid: () => jsError('JSMessageTTLInvalidErr'),
  messageIncrDisabled: () => jsError('JSMessageIncrDisabledErr'),
  messageIncrInvalid: () => jsError('JSMessageIncrInvalidErr'),
  messageIncrMissing: () => jsError('JSMessageIncrMissingErr'),
  messageIncrPayload: () => jsError('JSMessageIncrPayloadErr'),
  counterBroken: () => jsError('JSMessageCounterBrokenErr'),
  atomicPublishDisabled: () => jsError('JSAtomicPublishDisabledErr'),
  messageSchedulesDisabled: () => jsError('JSMessageSchedulesDisabledErr'),
  expectedLastSubjectSeqMissing: () => jsError('JSStreamExpectedLastSeqPerSubjectInvalid'),
  messageSchedulesSchedulerInvalid: () => jsError('JSMessageSchedulesSchedulerInvalidErr'),
  requiredApiLevel: () => jsError('JSRequiredApiLevelErr'),
  atomicPublishMissingSeq: () => jsError('JSAtomicPublishMissingSeqErr'),
  atomicPublishIncomplete: () => jsError('JSAtomicPublishIncompleteBatchErr'),
  atomicPublishUnsupportedHeader: (header: string) => jsError('JSAtomicPublishUnsupportedHeaderBatchErr', { header }),
  atomicPublishInvalidBatchId: () => jsError('JSAtomicPublishInvalidBatchIDErr'),
  mirrorWithAtomicPublish: () => jsError('JSMirrorWithAtomicPublishErr'),
  atomicPublishTooLarge: (size: number) => jsError('JSAtomicPublishTooLargeBatchErrF', { size }),
  atomicPublishInvalidCommit: () => jsError('JSAtomicPublishInvalidBatchCommitErr'),
  atomicPublishDuplicateMsgId: () => jsError('JSAtomicPublishContainsDuplicateMessageErr'),
  atomicPublishTooManyInflight: () => jsError('JSAtomicPublishTooManyInflight'),
  batchPublishDisabled: () => jsError('JSBatchPublishDisabledErr'),
  batchPublishInvalidPattern: () => jsError('JSBatchPublishInvalidPatternErr'),
  batchPublishInvalidBatchId: () => jsError('JSBatchPublishInvalidBatchIDErr'),
  batchPublishUnknownBatchId: () => jsError('JSBatchPublishUnknownBatchIDErr'),
  mirrorWithBatchPublish: () => jsError('JSMirrorWithBatchPublishErr'),
  batchPublishTooManyInflight: () => jsError('JSBatchPublishTooManyInflight'),
  wrongLastSequenceConstant: () => jsError('JSStreamWrongLastSequenceConstantErr'),
  consumerPriorityPolicyWithoutGroup: () => jsError('JSConsumerPriorityPolicyWithoutGroup'),
  consumerInvalidPriorityGroup: () => jsError('JSConsumerInvalidPriorityGroupErr'),
  consumerEmptyGroupName: () => jsError('JSConsumerEmptyGroupName'),
  consumerInvalidGroupName: () => jsError('JSConsumerInvalidGroupNameErr'),
  consumerPushWithPriorityGroup: () => jsError('JSConsumerPushWithPriorityGroupErr'),
  consumerInvalidReset: (err: string) => jsError('JSConsumerInvalidResetErr', { err }),
  consumerPriorityGroupWithPolicyNone: () => jsError('JSConsumerPriorityGroupWithPolicyNone'),
  consumerPinnedTtlWithPolicyNone: () => jsError('JSConsumerPinnedTTLWithoutPriorityPolicyNone'),
} as const;
