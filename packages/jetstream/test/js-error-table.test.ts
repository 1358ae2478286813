// The one error table (src/api/js-error-table.ts) against nats-server 2.14's server/errors.json, and every
// named error helper against the exact {code, err_code, description} a client got before the table existed.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { StoreError, type StoreErrorCode } from '@flotilla/store';
import { describe, expect, it } from 'vitest';
import { ApiError } from '../src/api/api-error.js';
import { JsErrors } from '../src/api/api-errors.js';
import { JS_ERROR_TABLE, jsError, type JsErrorName } from '../src/api/js-error-table.js';
import { apiErrorOfStore } from '../src/api/store-api-error.js';
import { ClusterErrors } from '../src/cluster/meta-errors.js';
import { noReplacementPeerError, unavailableError } from '../src/cluster/stream-replica-errors.js';
import { consumerErrors } from '../src/consumer/consumer-errors.js';

/** nats-server v2.14.5 server/errors.json: constant → [code, error_code, description], for the entries used. */
const NATS_2_14: Record<JsErrorName, [number, number, string]> = {
  JSAccountResourcesExceededErr: [400, 10002, 'resource limits exceeded for account'],
  JSBadRequestErr: [400, 10003, 'bad request'],
  JSClusterServerNotMemberErr: [400, 10044, 'server is not a member of the cluster'],
  JSClusterServerMemberChangeInflightErr: [400, 10202, 'cluster member change is in progress'],
  JSStreamMoveNotInProgress: [400, 10129, 'stream move not in progress'],
  JSNoAccountErr: [503, 10035, 'account not found'],
  JSPedanticErrF: [400, 10157, 'pedantic mode: {err}'],
  JSSnapshotDeliverSubjectInvalidErr: [400, 10015, 'deliver subject not valid'],
  JSRestoreSubscribeFailedErrF: [500, 10042, 'JetStream unable to subscribe to restore snapshot {subject}: {err}'],
  JSStreamRestoreErrF: [500, 10062, 'restore failed: {err}'],
  JSStreamSnapshotErrF: [500, 10064, 'snapshot failed: {err}'],
  JSStreamNameExistRestoreFailedErr: [400, 10130, 'stream name already in use, cannot restore'],
  JSClusterNoPeersErrF: [400, 10005, '{err}'],
  JSClusterNotAvailErr: [503, 10008, 'JetStream system temporarily unavailable'],
  JSClusterRequiredErr: [503, 10010, 'JetStream clustering support required'],
  JSConsumerCreateErrF: [500, 10012, '{err}'],
  JSConsumerNameExistErr: [400, 10013, 'consumer name already in use'],
  JSConsumerNotFoundErr: [404, 10014, 'consumer not found'],
  JSConsumerDurableNameNotInSubjectErr: [400, 10016, 'consumer expected to be durable but no durable name set in subject'],
  JSConsumerDurableNameNotMatchSubjectErr: [400, 10017, 'consumer name in subject does not match durable name in request'],
  JSConsumerDurableNameNotSetErr: [400, 10018, 'consumer expected to be durable but a durable name was not set'],
  JSConsumerEphemeralWithDurableNameErr: [400, 10020, 'consumer expected to be ephemeral but a durable name was set in request'],
  JSInsufficientResourcesErr: [503, 10023, 'insufficient resources'],
  JSInvalidJSONErr: [400, 10025, 'invalid JSON: {err}'],
  JSMaximumConsumersLimitErr: [400, 10026, 'maximum consumers limit reached'],
  JSMaximumStreamsLimitErr: [400, 10027, 'maximum number of streams reached'],
  JSNoLimitsErr: [400, 10120, 'no JetStream default or applicable tiered limit present'],
  JSMemoryResourcesExceededErr: [500, 10028, 'insufficient memory resources available'],
  JSStreamMaxBytesRequired: [400, 10113, 'account requires a stream config to have max bytes set'],
  JSStreamMaxStreamBytesExceeded: [400, 10122, 'stream max bytes exceeds account limit max stream bytes'],
  JSNoMessageFoundErr: [404, 10037, 'no message found'],
  JSNotEmptyRequestErr: [400, 10038, 'expected an empty request payload'],
  JSNotEnabledForAccountErr: [503, 10039, 'JetStream not enabled for account'],
  JSClusterPeerNotMemberErr: [400, 10040, 'peer not a member'],
  JSSequenceNotFoundErrF: [400, 10043, 'sequence {seq} not found'],
  JSStorageResourcesExceededErr: [500, 10047, 'insufficient storage resources available'],
  JSStreamCreateErrF: [500, 10049, '{err}'],
  JSStreamGeneralErrorF: [500, 10051, '{err}'],
  JSMessageTTLInvalidErr: [400, 10165, 'invalid per-message TTL'],
  JSMessageTTLDisabledErr: [400, 10166, 'per-message TTL is disabled'],
  JSMessageIncrDisabledErr: [400, 10168, 'message counters is disabled'],
  JSMessageIncrMissingErr: [400, 10169, 'message counter increment is missing'],
  JSMessageIncrPayloadErr: [400, 10170, 'message counter has payload'],
  JSMessageIncrInvalidErr: [400, 10171, 'message counter increment is invalid'],
  JSMessageCounterBrokenErr: [400, 10172, 'message counter is broken'],
  JSMirrorWithCountersErr: [400, 10173, 'stream mirrors can not also calculate counters'],
  JSAtomicPublishDisabledErr: [400, 10174, 'atomic publish is disabled'],
  JSAtomicPublishMissingSeqErr: [400, 10175, 'atomic publish sequence is missing'],
  JSAtomicPublishIncompleteBatchErr: [400, 10176, 'atomic publish batch is incomplete'],
  JSAtomicPublishUnsupportedHeaderBatchErr: [400, 10177, 'atomic publish unsupported header used: {header}'],
  JSAtomicPublishInvalidBatchIDErr: [400, 10179, 'atomic publish batch ID is invalid'],
  JSMirrorWithAtomicPublishErr: [400, 10198, 'stream mirrors can not also use atomic publishing'],
  JSAtomicPublishTooLargeBatchErrF: [400, 10199, 'atomic publish batch is too large: {size}'],
  JSAtomicPublishInvalidBatchCommitErr: [400, 10200, 'atomic publish batch commit is invalid'],
  JSAtomicPublishContainsDuplicateMessageErr: [400, 10201, 'atomic publish batch contains duplicate message id'],
  JSAtomicPublishTooManyInflight: [429, 10210, 'atomic publish too many inflight'],
  JSBatchPublishDisabledErr: [400, 10205, 'batch publish is disabled'],
  JSBatchPublishInvalidPatternErr: [400, 10206, 'batch publish pattern is invalid'],
  JSBatchPublishInvalidBatchIDErr: [400, 10207, 'batch publish ID is invalid'],
  JSBatchPublishUnknownBatchIDErr: [400, 10208, 'batch publish ID unknown'],
  JSMirrorWithBatchPublishErr: [400, 10209, 'stream mirrors can not also use batch publishing'],
  JSBatchPublishTooManyInflight: [429, 10211, 'batch publish too many inflight'],
  JSStreamWrongLastSequenceConstantErr: [400, 10164, 'wrong last sequence'],
  JSRequiredApiLevelErr: [412, 10185, 'JetStream minimum api level required'],
  JSMessageSchedulesDisabledErr: [400, 10188, 'message schedules is disabled'],
  JSMessageSchedulesPatternInvalidErr: [400, 10189, 'message schedules pattern is invalid'],
  JSMessageSchedulesTargetInvalidErr: [400, 10190, 'message schedules target is invalid'],
  JSMessageSchedulesTTLInvalidErr: [400, 10191, 'message schedules invalid per-message TTL'],
  JSMessageSchedulesRollupInvalidErr: [400, 10192, 'message schedules invalid rollup'],
  JSMessageSchedulesSourceInvalidErr: [400, 10203, 'message schedules source is invalid'],
  JSMessageSchedulesTimeZoneInvalidErr: [400, 10223, 'message schedules time zone is invalid'],
  JSStreamExpectedLastSeqPerSubjectInvalid: [400, 10193, 'missing sequence for expected last sequence per subject'],
  JSConsumerInvalidResetErr: [400, 10204, 'invalid reset: {err}'],
  JSConsumerPriorityPolicyWithoutGroup: [400, 10159, 'Setting PriorityPolicy requires at least one PriorityGroup to be set'],
  JSConsumerInvalidPriorityGroupErr: [400, 10160, 'Provided priority group does not exist for this consumer'],
  JSConsumerEmptyGroupName: [400, 10161, 'Group name cannot be an empty string'],
  JSConsumerInvalidGroupNameErr: [400, 10162, 'Valid priority group name must match A-Z, a-z, 0-9, -_/=)+ and may not exceed 16 characters'],
  JSConsumerPushWithPriorityGroupErr: [400, 10178, 'priority groups can not be used with push consumers'],
  JSConsumerPriorityGroupWithPolicyNone: [400, 10196, 'consumer can not have priority groups when policy is none'],
  JSConsumerPinnedTTLWithoutPriorityPolicyNone: [400, 10197, 'PinnedTTL cannot be set when PriorityPolicy is none'],
  JSMessageSchedulesSchedulerInvalidErr: [400, 10212, 'message schedules invalid scheduler'],
  JSMirrorConsumerSetupFailedErrF: [500, 10029, '{err}'],
  JSMirrorMaxMessageSizeTooBigErr: [400, 10030, 'stream mirror must have max message size >= source'],
  JSMirrorWithSourcesErr: [400, 10031, 'stream mirrors can not also contain other sources'],
  JSMirrorWithSubjectsErr: [400, 10034, 'stream mirrors can not contain subjects'],
  JSSourceConsumerSetupFailedErrF: [500, 10045, '{err}'],
  JSSourceMaxMessageSizeTooBigErr: [400, 10046, 'stream source must have max message size >= target'],
  JSStreamMirrorNotUpdatableErr: [400, 10055, 'stream mirror configuration can not be updated'],
  JSSourceDuplicateDetected: [400, 10140, 'duplicate source configuration detected'],
  JSSourceInvalidStreamName: [400, 10141, 'sourced stream name is invalid'],
  JSMirrorInvalidStreamName: [400, 10142, 'mirrored stream name is invalid'],
  JSMirrorWithFirstSeqErr: [400, 10143, 'stream mirrors can not have first sequence configured'],
  JSSourceMultipleFiltersNotAllowed: [400, 10144, 'source with multiple subject transforms cannot also have a single subject filter'],
  JSSourceInvalidSubjectFilter: [400, 10145, 'source transform source: {err}'],
  JSSourceInvalidTransformDestination: [400, 10146, 'source transform: {err}'],
  JSSourceOverlappingSubjectFilters: [400, 10147, 'source filters can not overlap'],
  JSMirrorMultipleFiltersNotAllowed: [400, 10150, 'mirror with multiple subject transforms cannot also have a single subject filter'],
  JSMirrorInvalidSubjectFilter: [400, 10151, 'mirror transform source: {err}'],
  JSMirrorOverlappingSubjectFilters: [400, 10152, 'mirror subject filters can not overlap'],
  JSMirrorInvalidTransformDestination: [400, 10154, 'mirror transform: {err}'],
  JSStreamTransformInvalidSource: [400, 10155, 'stream transform source: {err}'],
  JSStreamTransformInvalidDestination: [400, 10156, 'stream transform: {err}'],
  JSStreamInvalidConfigF: [500, 10052, '{err}'],
  JSStreamMessageExceedsMaximumErr: [400, 10054, 'message size exceeds maximum allowed'],
  JSStreamMismatchErr: [400, 10056, 'stream name in subject does not match request'],
  JSStreamMsgDeleteFailedF: [500, 10057, '{err}'],
  JSStreamNameExistErr: [400, 10058, 'stream name already in use with a different configuration'],
  JSStreamNotFoundErr: [404, 10059, 'stream not found'],
  JSStreamNotMatchErr: [400, 10060, 'expected stream does not match'],
  JSStreamSubjectOverlapErr: [400, 10065, 'subjects overlap with an existing stream'],
  JSStreamWrongLastMsgIDErrF: [400, 10070, 'wrong last msg ID: {id}'],
  JSStreamWrongLastSequenceErrF: [400, 10071, 'wrong last sequence: {seq}'],
  JSStreamReplicasNotSupportedErr: [500, 10074, 'replicas > 1 not supported in non-clustered mode'],
  JSStreamStoreFailedF: [503, 10077, '{err}'],
  JSConsumerConfigRequiredErr: [400, 10078, 'consumer config required'],
  JSConsumerDeliverToWildcardsErr: [400, 10079, 'consumer deliver subject has wildcards'],
  JSConsumerPushMaxWaitingErr: [400, 10080, 'consumer in push mode can not set max waiting'],
  JSConsumerDeliverCycleErr: [400, 10081, 'consumer deliver subject forms a cycle'],
  JSConsumerMaxPendingAckPolicyRequiredErr: [400, 10082, 'consumer requires ack policy for max ack pending'],
  JSConsumerSmallHeartbeatErr: [400, 10083, 'consumer idle heartbeat needs to be >= 100ms'],
  JSConsumerPullRequiresAckErr: [400, 10084, 'consumer in pull mode requires explicit ack policy on workqueue stream'],
  JSConsumerPullWithRateLimitErr: [400, 10086, 'consumer in pull mode can not have rate limit set'],
  JSConsumerMaxWaitingNegativeErr: [400, 10087, 'consumer max waiting needs to be positive'],
  JSConsumerHBRequiresPushErr: [400, 10088, 'consumer idle heartbeat requires a push based consumer'],
  JSConsumerFCRequiresPushErr: [400, 10089, 'consumer flow control requires a push based consumer'],
  JSConsumerFilterNotSubsetErr: [400, 10093, 'consumer filter subject is not a valid subset of the interest subjects'],
  JSConsumerInvalidPolicyErrF: [400, 10094, '{err}'],
  JSConsumerInvalidSamplingErrF: [400, 10095, 'failed to parse consumer sampling configuration: {err}'],
  JSStreamHeaderExceedsMaximumErr: [400, 10097, 'header size exceeds maximum allowed of 64k'],
  JSConsumerWQRequiresExplicitAckErr: [400, 10098, 'workqueue stream requires explicit ack'],
  JSConsumerWQMultipleUnfilteredErr: [400, 10099, 'multiple non-filtered consumers not allowed on workqueue stream'],
  JSConsumerWQConsumerNotUniqueErr: [400, 10100, 'filtered consumer not unique on workqueue stream'],
  JSConsumerWQConsumerNotDeliverAllErr: [400, 10101, 'consumer must be deliver all on workqueue stream'],
  JSConsumerNameTooLongErrF: [400, 10102, 'consumer name is too long, maximum allowed is {max}'],
  JSConsumerBadDurableNameErr: [400, 10103, "durable name can not contain '.', '*', '>'"],
  JSConsumerExistingActiveErr: [400, 10105, 'consumer already exists and is still active'],
  JSConsumerDescriptionTooLongErrF: [400, 10107, 'consumer description is too long, maximum allowed is {max}'],
  JSConsumerWithFlowControlNeedsHeartbeats: [400, 10108, 'consumer with flow control also needs heartbeats'],
  JSStreamSealedErr: [400, 10109, 'invalid operation on sealed stream'],
  JSStreamPurgeFailedF: [500, 10110, '{err}'],
  JSStreamRollupFailedF: [500, 10111, '{err}'],
  JSConsumerInvalidDeliverSubject: [400, 10112, 'invalid push consumer deliver subject'],
  JSConsumerMaxRequestBatchNegativeErr: [400, 10114, 'consumer max request batch needs to be > 0'],
  JSConsumerMaxRequestExpiresTooSmall: [400, 10115, 'consumer max request expires needs to be >= 1ms'],
  JSConsumerMaxDeliverBackoffErr: [400, 10116, 'max deliver is required to be > length of backoff values'],
  JSConsumerMaxPendingAckExcessErrF: [400, 10121, 'consumer max ack pending exceeds system limit of {limit}'],
  JSConsumerReplicasExceedsStream: [400, 10126, 'consumer config replica count exceeds parent stream'],
  JSConsumerNameContainsPathSeparatorsErr: [400, 10127, 'Consumer name can not contain path separators'],
  JSStreamNameContainsPathSeparatorsErr: [400, 10128, 'Stream name can not contain path separators'],
  JSConsumerCreateFilterSubjectMismatchErr: [400, 10131, 'Consumer create request did not match filtered subject from create subject'],
  JSConsumerCreateDurableAndNameMismatch: [400, 10132, 'Consumer Durable and Name have to be equal if both are provided'],
  JSReplicasCountCannotBeNegative: [400, 10133, 'replicas count cannot be negative'],
  JSConsumerReplicasShouldMatchStream: [400, 10134, "consumer config replicas must match interest retention stream's replicas"],
  JSConsumerMetadataLengthErrF: [400, 10135, 'consumer metadata exceeds maximum size of {limit}'],
  JSConsumerDuplicateFilterSubjects: [400, 10136, 'consumer cannot have both FilterSubject and FilterSubjects specified'],
  JSConsumerMultipleFiltersNotAllowed: [400, 10137, 'consumer with multiple subject filters cannot use subject based API'],
  JSConsumerOverlappingSubjectFilters: [400, 10138, 'consumer subject filters cannot overlap'],
  JSConsumerEmptyFilter: [400, 10139, 'consumer filter in FilterSubjects cannot be empty'],
  JSConsumerAlreadyExists: [400, 10148, 'consumer already exists'],
  JSConsumerDoesNotExist: [400, 10149, 'consumer does not exist'],
  JSConsumerInactiveThresholdExcess: [400, 10153, 'consumer inactive threshold exceeds system limit of {limit}'],
};

/** Where Flotilla's text deliberately differs from 2.14's, and what it sends instead. */
const KNOWN_DIFFERENCES: Partial<Record<JsErrorName, string>> = {
  // 2.14 appends Go's decoder message; Flotilla sends 2.9's fixed text (e2e tests compare it verbatim).
  JSInvalidJSONErr: 'invalid JSON',
};

describe('the JetStream error table', () => {
  const names = Object.keys(JS_ERROR_TABLE) as JsErrorName[];

  it.each(names)('%s has nats-server 2.14’s code, err_code and description', (name) => {
    const [code, errCode, description] = NATS_2_14[name];
    const entry = JS_ERROR_TABLE[name];
    expect({ code: entry.code, errCode: entry.errCode }).toEqual({ code, errCode });
    expect(entry.description).toBe(KNOWN_DIFFERENCES[name] ?? description);
  });

  it('lists every entry it is checked against, and defines no err_code twice', () => {
    expect(names.sort()).toEqual(Object.keys(NATS_2_14).sort());
    const errCodes = names.map((n) => JS_ERROR_TABLE[n].errCode);
    expect(errCodes.filter((c, i) => errCodes.indexOf(c) !== i)).toEqual([]);
  });

  it('fills a description’s placeholders in one pass, as nats-server’s Replacer does', () => {
    expect(jsError('JSSequenceNotFoundErrF', { seq: 42 }).toJSON()).toEqual({ code: 400, err_code: 10043, description: 'sequence 42 not found' });
    // A value that itself looks like a placeholder is not expanded again.
    expect(jsError('JSStreamInvalidConfigF', { err: 'bad {err}' }).description).toBe('bad {err}');
    expect(jsError('JSBadRequestErr')).toBeInstanceOf(ApiError);
  });
});

/** Each helper's answer as it was before the table: [call, code, err_code, description]. */
const HELPERS: Array<[() => ApiError, number, number, string]> = [
  [() => JsErrors.badRequest(), 400, 10003, 'bad request'],
  [() => JsErrors.insufficientResources(), 503, 10023, 'insufficient resources'],
  [() => JsErrors.memoryResourcesExceeded(), 500, 10028, 'insufficient memory resources available'],
  [() => JsErrors.storageResourcesExceeded(), 500, 10047, 'insufficient storage resources available'],
  [() => JsErrors.accountResourcesExceeded(), 400, 10002, 'resource limits exceeded for account'],
  [() => JsErrors.maximumStreams(), 400, 10027, 'maximum number of streams reached'],
  [() => JsErrors.noLimits(), 400, 10120, 'no JetStream default or applicable tiered limit present'],
  [() => JsErrors.maximumConsumers(), 400, 10026, 'maximum consumers limit reached'],
  [() => JsErrors.streamMaxBytesRequired(), 400, 10113, 'account requires a stream config to have max bytes set'],
  [() => JsErrors.streamMaxBytesExceedsAccount(), 400, 10122, 'stream max bytes exceeds account limit max stream bytes'],
  [() => JsErrors.invalidJson(), 400, 10025, 'invalid JSON'],
  [() => JsErrors.noMessageFound(), 404, 10037, 'no message found'],
  [() => JsErrors.sequenceNotFound(7), 400, 10043, 'sequence 7 not found'],
  [() => JsErrors.notEnabledForAccount(), 503, 10039, 'JetStream not enabled for account'],
  [() => JsErrors.clusteringRequired(), 503, 10010, 'JetStream clustering support required'],
  [() => JsErrors.streamInvalidConfig('maximum replicas is 5'), 500, 10052, 'maximum replicas is 5'],
  [() => JsErrors.messageSizeExceeds(), 400, 10054, 'message size exceeds maximum allowed'],
  [() => JsErrors.streamNameMismatch(), 400, 10056, 'stream name in subject does not match request'],
  [() => JsErrors.streamMsgDeleteFailed('message delete not permitted'), 500, 10057, 'message delete not permitted'],
  [() => JsErrors.streamNameInUse(), 400, 10058, 'stream name already in use with a different configuration'],
  [() => JsErrors.streamNameExistRestoreFailed(), 400, 10130, 'stream name already in use, cannot restore'],
  [() => JsErrors.streamNotFound(), 404, 10059, 'stream not found'],
  [() => JsErrors.expectedStreamMismatch(), 400, 10060, 'expected stream does not match'],
  [() => JsErrors.subjectsOverlap(), 400, 10065, 'subjects overlap with an existing stream'],
  [() => JsErrors.wrongLastMsgId('id-1'), 400, 10070, 'wrong last msg ID: id-1'],
  [() => JsErrors.wrongLastSequence(3), 400, 10071, 'wrong last sequence: 3'],
  [() => JsErrors.replicasNotSupported(), 500, 10074, 'replicas > 1 not supported in non-clustered mode'],
  [() => JsErrors.storeFailed('maximum messages exceeded'), 503, 10077, 'maximum messages exceeded'],
  [() => JsErrors.headersTooLarge(), 400, 10097, 'header size exceeds maximum allowed of 64k'],
  [() => JsErrors.streamSealed(), 400, 10109, 'invalid operation on sealed stream'],
  [() => JsErrors.streamPurgeFailed('stream purge not permitted'), 500, 10110, 'stream purge not permitted'],
  [() => JsErrors.rollupNotPermitted(), 500, 10111, 'rollup not permitted'],
  [() => JsErrors.nameHasPathSeparators(), 400, 10128, 'Stream name can not contain path separators'],
  [() => JsErrors.notEmptyRequest(), 400, 10038, 'expected an empty request payload'],
  [() => JsErrors.notImplemented('STREAM.SNAPSHOT'), 500, 10051, 'STREAM.SNAPSHOT is not implemented by flotilla'],
  [() => JsErrors.unknownJsonField('foo'), 400, 10025, 'invalid JSON: json: unknown field "foo"'],
  [() => JsErrors.configFieldUnsupported('stream', 'allow_msg_ttl'), 500, 10052, "stream configuration field 'allow_msg_ttl' is not supported"],
  [() => JsErrors.configValueUnsupported('stream', 'persist_mode', 'async'), 500, 10052, "stream configuration field 'persist_mode' value 'async' is not supported"],
  [() => JsErrors.messageTtlDisabled(), 400, 10166, 'per-message TTL is disabled'],
  [() => JsErrors.messageTtlInvalid(), 400, 10165, 'invalid per-message TTL'],
  [() => JsErrors.messageIncrDisabled(), 400, 10168, 'message counters is disabled'],
  [() => JsErrors.messageIncrInvalid(), 400, 10171, 'message counter increment is invalid'],
  [() => JsErrors.messageIncrMissing(), 400, 10169, 'message counter increment is missing'],
  [() => JsErrors.messageIncrPayload(), 400, 10170, 'message counter has payload'],
  [() => JsErrors.counterBroken(), 400, 10172, 'message counter is broken'],
  [() => JsErrors.atomicPublishDisabled(), 400, 10174, 'atomic publish is disabled'],
  [() => JsErrors.messageSchedulesDisabled(), 400, 10188, 'message schedules is disabled'],
  [() => JsErrors.expectedLastSubjectSeqMissing(), 400, 10193, 'missing sequence for expected last sequence per subject'],
  [() => JsErrors.messageSchedulesSchedulerInvalid(), 400, 10212, 'message schedules invalid scheduler'],
  [() => JsErrors.requiredApiLevel(), 412, 10185, 'JetStream minimum api level required'],
  [() => JsErrors.atomicPublishMissingSeq(), 400, 10175, 'atomic publish sequence is missing'],
  [() => JsErrors.atomicPublishIncomplete(), 400, 10176, 'atomic publish batch is incomplete'],
  [() => JsErrors.atomicPublishUnsupportedHeader('Nats-Expected-Last-Msg-Id'), 400, 10177, 'atomic publish unsupported header used: Nats-Expected-Last-Msg-Id'],
  [() => JsErrors.atomicPublishInvalidBatchId(), 400, 10179, 'atomic publish batch ID is invalid'],
  [() => JsErrors.mirrorWithAtomicPublish(), 400, 10198, 'stream mirrors can not also use atomic publishing'],
  [() => JsErrors.atomicPublishTooLarge(1000), 400, 10199, 'atomic publish batch is too large: 1000'],
  [() => JsErrors.atomicPublishInvalidCommit(), 400, 10200, 'atomic publish batch commit is invalid'],
  [() => JsErrors.atomicPublishDuplicateMsgId(), 400, 10201, 'atomic publish batch contains duplicate message id'],
  [() => JsErrors.atomicPublishTooManyInflight(), 429, 10210, 'atomic publish too many inflight'],
  [() => JsErrors.batchPublishDisabled(), 400, 10205, 'batch publish is disabled'],
  [() => JsErrors.batchPublishInvalidPattern(), 400, 10206, 'batch publish pattern is invalid'],
  [() => JsErrors.batchPublishInvalidBatchId(), 400, 10207, 'batch publish ID is invalid'],
  [() => JsErrors.batchPublishUnknownBatchId(), 400, 10208, 'batch publish ID unknown'],
  [() => JsErrors.mirrorWithBatchPublish(), 400, 10209, 'stream mirrors can not also use batch publishing'],
  [() => JsErrors.batchPublishTooManyInflight(), 429, 10211, 'batch publish too many inflight'],
  [() => JsErrors.wrongLastSequenceConstant(), 400, 10164, 'wrong last sequence'],
  [() => JsErrors.consumerInvalidReset('below start seq'), 400, 10204, 'invalid reset: below start seq'],
  [() => JsErrors.consumerPriorityPolicyWithoutGroup(), 400, 10159, 'Setting PriorityPolicy requires at least one PriorityGroup to be set'],
  [() => JsErrors.consumerInvalidPriorityGroup(), 400, 10160, 'Provided priority group does not exist for this consumer'],
  [() => JsErrors.consumerEmptyGroupName(), 400, 10161, 'Group name cannot be an empty string'],
  [() => JsErrors.consumerInvalidGroupName(), 400, 10162, 'Valid priority group name must match A-Z, a-z, 0-9, -_/=)+ and may not exceed 16 characters'],
  [() => JsErrors.consumerPushWithPriorityGroup(), 400, 10178, 'priority groups can not be used with push consumers'],
  [() => JsErrors.consumerPriorityGroupWithPolicyNone(), 400, 10196, 'consumer can not have priority groups when policy is none'],
  [() => JsErrors.consumerPinnedTtlWithPolicyNone(), 400, 10197, 'PinnedTTL cannot be set when PriorityPolicy is none'],
  [() => consumerErrors.invalidJson(), 400, 10025, 'invalid JSON'],
  [() => consumerErrors.streamNotFound(), 404, 10059, 'stream not found'],
  [() => consumerErrors.streamMismatch(), 400, 10056, 'stream name in subject does not match request'],
  [() => consumerErrors.notFound(), 404, 10014, 'consumer not found'],
  [() => consumerErrors.configRequired(), 400, 10078, 'consumer config required'],
  [() => consumerErrors.nameExists(), 400, 10013, 'consumer name already in use'],
  [() => consumerErrors.alreadyExists(), 400, 10148, 'consumer already exists'],
  [() => consumerErrors.doesNotExist(), 400, 10149, 'consumer does not exist'],
  [() => consumerErrors.durableNotInSubject(), 400, 10016, 'consumer expected to be durable but no durable name set in subject'],
  [() => consumerErrors.durableNotSet(), 400, 10018, 'consumer expected to be durable but a durable name was not set'],
  [() => consumerErrors.durableMismatch(), 400, 10017, 'consumer name in subject does not match durable name in request'],
  [() => consumerErrors.ephemeralWithDurable(), 400, 10020, 'consumer expected to be ephemeral but a durable name was set in request'],
  [() => consumerErrors.pathSeparators(), 400, 10127, 'Consumer name can not contain path separators'],
  [() => consumerErrors.multipleFiltersNotAllowed(), 400, 10137, 'consumer with multiple subject filters cannot use subject based API'],
  [() => consumerErrors.filterMismatch(), 400, 10131, 'Consumer create request did not match filtered subject from create subject'],
  [() => consumerErrors.replicasNotSupported(), 500, 10074, 'replicas > 1 not supported in non-clustered mode'],
  [() => consumerErrors.replicasExceedStream(), 400, 10126, 'consumer config replica count exceeds parent stream'],
  [() => consumerErrors.replicasNegative(), 400, 10133, 'replicas count cannot be negative'],
  [() => consumerErrors.maxDeliverBackoff(), 400, 10116, 'max deliver is required to be > length of backoff values'],
  [() => consumerErrors.descriptionTooLong(4096), 400, 10107, 'consumer description is too long, maximum allowed is 4096'],
  [() => consumerErrors.deliverToWildcards(), 400, 10079, 'consumer deliver subject has wildcards'],
  [() => consumerErrors.invalidDeliverSubject(), 400, 10112, 'invalid push consumer deliver subject'],
  [() => consumerErrors.deliverCycle(), 400, 10081, 'consumer deliver subject forms a cycle'],
  [() => consumerErrors.pushMaxWaiting(), 400, 10080, 'consumer in push mode can not set max waiting'],
  [() => consumerErrors.maxPendingAckPolicy(), 400, 10082, 'consumer requires ack policy for max ack pending'],
  [() => consumerErrors.smallHeartbeat(), 400, 10083, 'consumer idle heartbeat needs to be >= 100ms'],
  [() => consumerErrors.pullRequiresAck(), 400, 10084, 'consumer in pull mode requires explicit ack policy on workqueue stream'],
  [() => consumerErrors.pullWithRateLimit(), 400, 10086, 'consumer in pull mode can not have rate limit set'],
  [() => consumerErrors.maxWaitingNegative(), 400, 10087, 'consumer max waiting needs to be positive'],
  [() => consumerErrors.hbRequiresPush(), 400, 10088, 'consumer idle heartbeat requires a push based consumer'],
  [() => consumerErrors.fcRequiresPush(), 400, 10089, 'consumer flow control requires a push based consumer'],
  [() => consumerErrors.maxBatchNegative(), 400, 10114, 'consumer max request batch needs to be > 0'],
  [() => consumerErrors.maxExpiresTooSmall(), 400, 10115, 'consumer max request expires needs to be >= 1ms'],
  [() => consumerErrors.duplicateFilters(), 400, 10136, 'consumer cannot have both FilterSubject and FilterSubjects specified'],
  [() => consumerErrors.badSubject(), 500, 10052, 'invalid subject'],
  [() => consumerErrors.emptyFilter(), 400, 10139, 'consumer filter in FilterSubjects cannot be empty'],
  [() => consumerErrors.overlappingFilters(), 400, 10138, 'consumer subject filters cannot overlap'],
  [() => consumerErrors.filterNotSubset(), 400, 10093, 'consumer filter subject is not a valid subset of the interest subjects'],
  [() => consumerErrors.invalidPolicy('consumer ack policy invalid'), 400, 10094, 'consumer ack policy invalid'],
  [() => consumerErrors.invalidSampling('bad%'), 400, 10095, 'failed to parse consumer sampling configuration: bad%'],
  [() => consumerErrors.fcNeedsHeartbeats(), 400, 10108, 'consumer with flow control also needs heartbeats'],
  [() => consumerErrors.durableAndNameMismatch(), 400, 10132, 'Consumer Durable and Name have to be equal if both are provided'],
  [() => consumerErrors.invalidName(), 500, 10052, "consumer name can not contain '.', '*', '>', '\\', '/'"],
  [() => consumerErrors.invalidDurableName(), 500, 10052, "consumer durable name can not contain '.', '*', '>', '\\', '/'"],
  [() => consumerErrors.badDurableName(), 400, 10103, "durable name can not contain '.', '*', '>'"],
  [() => consumerErrors.nameTooLong(255), 400, 10102, 'consumer name is too long, maximum allowed is 255'],
  [() => consumerErrors.maxConsumers(), 400, 10026, 'maximum consumers limit reached'],
  [() => consumerErrors.wqRequiresExplicitAck(), 400, 10098, 'workqueue stream requires explicit ack'],
  [() => consumerErrors.wqMultipleUnfiltered(), 400, 10099, 'multiple non-filtered consumers not allowed on workqueue stream'],
  [() => consumerErrors.wqNotUnique(), 400, 10100, 'filtered consumer not unique on workqueue stream'],
  [() => consumerErrors.wqNotDeliverAll(), 400, 10101, 'consumer must be deliver all on workqueue stream'],
  [() => consumerErrors.replicasMustMatchStream(), 400, 10134, "consumer config replicas must match interest retention stream's replicas"],
  [() => consumerErrors.metadataTooLong(), 400, 10135, 'consumer metadata exceeds maximum size of 128KB'],
  [() => consumerErrors.existingActive(), 400, 10105, 'consumer already exists and is still active'],
  [() => consumerErrors.createFailed('ENOSPC: no space left on device'), 500, 10012, 'ENOSPC: no space left on device'],
  [() => consumerErrors.inactiveThresholdExcess(90e9), 400, 10153, 'consumer inactive threshold exceeds system limit of 1m30s'],
  [() => consumerErrors.maxAckPendingExcess(1000), 400, 10121, 'consumer max ack pending exceeds system limit of 1000'],
  [() => ClusterErrors.unavailable(), 503, 10008, 'JetStream system temporarily unavailable'],
  [() => ClusterErrors.noSuitablePeers(), 400, 10005, 'no suitable peers for placement'],
  [() => ClusterErrors.noReplacementPeer(), 400, 10005, 'no replacement peer connected'],
  [() => ClusterErrors.peerNotMember(), 400, 10040, 'peer not a member'],
  [() => unavailableError(), 503, 10008, 'JetStream system temporarily unavailable'],
  [() => noReplacementPeerError(), 400, 10005, 'no replacement peer connected'],
  // Formerly inline: STREAM.* handlers' unexpected failures, and a consumer step-down on a single node.
  [() => JsErrors.streamCreateFailed('ENOTDIR: not a directory'), 500, 10049, 'ENOTDIR: not a directory'],
  [() => consumerErrors.clusteringRequired(), 503, 10010, 'JetStream clustering support required'],
];

describe('the named error helpers', () => {
  it.each(HELPERS.map(([call, code, errCode, description]) => ({ call, code, errCode, description, label: `${errCode} ${description}` })))(
    '$label',
    ({ call, code, errCode, description }) => {
      expect(call().toJSON()).toEqual({ code, err_code: errCode, description });
    },
  );

  it('cover every helper of JsErrors, consumerErrors and ClusterErrors', () => {
    const called = new Set(HELPERS.map(([call]) => /\.(\w+)\(/.exec(call.toString())?.[1]));
    for (const view of [JsErrors, consumerErrors, ClusterErrors]) {
      for (const name of Object.keys(view)) expect(called, name).toContain(name);
    }
  });
});

describe('store errors as API errors', () => {
  const cases: Array<[StoreError | Error, number, number, string]> = [
    [new StoreError('MAX_MSGS'), 503, 10077, 'maximum messages exceeded'],
    [new StoreError('MAX_BYTES', 'detail not shown'), 503, 10077, 'maximum bytes exceeded'],
    [new StoreError('MAX_MSGS_PER_SUBJECT'), 503, 10077, 'maximum messages per subject exceeded'],
    [new StoreError('MAX_MSG_SIZE'), 400, 10054, 'message size exceeds maximum allowed'],
    [new StoreError('NOT_FOUND'), 404, 10037, 'no message found'],
    [new StoreError('SEQUENCE_MISMATCH'), 503, 10077, 'expected sequence does not match store'],
    [new StoreError('CLOSED'), 503, 10077, 'store is closed'],
    [new StoreError('CORRUPT', 'segment /data/s/seg-1.log'), 503, 10077, 'store data is corrupt: segment <path>'],
    [new StoreError('IO', 'no space left on device'), 503, 10077, 'store i/o error: no space left on device'],
    [new Error('boom'), 503, 10077, 'boom'],
  ];
  it.each(cases)('%s', (err, code, errCode, description) => {
    expect(apiErrorOfStore(err).toJSON()).toEqual({ code, err_code: errCode, description });
  });

  it('cover every StoreError code', () => {
    const codes: StoreErrorCode[] = ['MAX_MSGS', 'MAX_BYTES', 'MAX_MSGS_PER_SUBJECT', 'MAX_MSG_SIZE', 'SEQUENCE_MISMATCH', 'NOT_FOUND', 'CLOSED', 'CORRUPT', 'IO'];
    const covered = cases.flatMap(([err]) => (err instanceof StoreError ? [err.code] : []));
    expect(new Set(covered)).toEqual(new Set(codes));
  });
});

describe('ApiError construction', () => {
  it('happens only in the error table: no other source file builds one from literal codes', () => {
    const packagesDir = fileURLToPath(new URL('../../', import.meta.url));
    const offenders: string[] = [];
    for (const pkg of readdirSync(packagesDir)) {
      const src = join(packagesDir, pkg, 'src');
      if (!statSync(src, { throwIfNoEntry: false })?.isDirectory()) continue;
      for (const file of sourceFiles(src)) {
        if (file.endsWith(join('api', 'js-error-table.ts'))) continue;
        if (/new ApiError\(/.test(readFileSync(file, 'utf8'))) offenders.push(file.slice(packagesDir.length));
      }
    }
    expect(offenders).toEqual([]);
  });
});

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const path = join(dir, e.name);
    if (e.isDirectory()) return sourceFiles(path);
    return e.name.endsWith('.ts') ? [path] : [];
  });
}
