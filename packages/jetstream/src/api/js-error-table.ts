// The one table of JetStream API errors Flotilla sends: nats-server's constant name (server/errors.json) →
// {code, err_code, description}. Every ApiError is built from an entry here, so an err_code and its text
// exist once; the named helpers (JsErrors, consumerErrors, ClusterErrors, …) are views onto it.
// `{name}` in a description is a parameter, filled in as nats-server's NewJS…Error(…) does.
import { ApiError } from './api-error.js';

export interface JsErrorEntry {
  readonly code: number;
  readonly errCode: number;
  readonly description: string;
}

export const JS_ERROR_TABLE = {
  // Cluster operations (cluster/server-remove.ts).
  JSClusterServerNotMemberErr: { code: 400, errCode: 10044, description: 'server is not a member of the cluster' },
  JSClusterServerMemberChangeInflightErr: { code: 400, errCode: 10202, description: 'cluster member change is in progress' },
  JSStreamMoveNotInProgress: { code: 400, errCode: 10129, description: 'stream move not in progress' },
  JSNoAccountErr: { code: 503, errCode: 10035, description: 'account not found' },
  JSAccountResourcesExceededErr: { code: 400, errCode: 10002, description: 'resource limits exceeded for account' },
  JSBadRequestErr: { code: 400, errCode: 10003, description: 'bad request' },
  JSSnapshotDeliverSubjectInvalidErr: { code: 400, errCode: 10015, description: 'deliver subject not valid' },
  JSRestoreSubscribeFailedErrF: { code: 500, errCode: 10042, description: 'JetStream unable to subscribe to restore snapshot {subject}: {err}' },
  JSStreamRestoreErrF: { code: 500, errCode: 10062, description: 'restore failed: {err}' },
  JSStreamSnapshotErrF: { code: 500, errCode: 10064, description: 'snapshot failed: {err}' },
  JSStreamNameExistRestoreFailedErr: { code: 400, errCode: 10130, description: 'stream name already in use, cannot restore' },
  JSClusterNoPeersErrF: { code: 400, errCode: 10005, description: '{err}' },
  JSClusterNotAvailErr: { code: 503, errCode: 10008, description: 'JetStream system temporarily unavailable' },
  JSClusterRequiredErr: { code: 503, errCode: 10010, description: 'JetStream clustering support required' },
  JSConsumerCreateErrF: { code: 500, errCode: 10012, description: '{err}' },
  JSConsumerNameExistErr: { code: 400, errCode: 10013, description: 'consumer name already in use' },
  JSConsumerNotFoundErr: { code: 404, errCode: 10014, description: 'consumer not found' },
  JSConsumerDurableNameNotInSubjectErr: { code: 400, errCode: 10016, description: 'consumer expected to be durable but no durable name set in subject' },
  JSConsumerDurableNameNotMatchSubjectErr: { code: 400, errCode: 10017, description: 'consumer name in subject does not match durable name in request' },
  JSConsumerDurableNameNotSetErr: { code: 400, errCode: 10018, description: 'consumer expected to be durable but a durable name was not set' },
  JSConsumerEphemeralWithDurableNameErr: { code: 400, errCode: 10020, description: 'consumer expected to be ephemeral but a durable name was set in request' },
  JSInsufficientResourcesErr: { code: 503, errCode: 10023, description: 'insufficient resources' },
  // nats-server 2.10+ appends the decoder's reason (`invalid JSON: {err}`); Flotilla keeps 2.9's text, which
  // clients and the e2e tests compare verbatim (Go's decoder messages could not be matched anyway).
  JSInvalidJSONErr: { code: 400, errCode: 10025, description: 'invalid JSON' },
  JSMaximumConsumersLimitErr: { code: 400, errCode: 10026, description: 'maximum consumers limit reached' },
  JSMaximumStreamsLimitErr: { code: 400, errCode: 10027, description: 'maximum number of streams reached' },
  JSNoLimitsErr: { code: 400, errCode: 10120, description: 'no JetStream default or applicable tiered limit present' },
  JSMemoryResourcesExceededErr: { code: 500, errCode: 10028, description: 'insufficient memory resources available' },
  JSStreamMaxBytesRequired: { code: 400, errCode: 10113, description: 'account requires a stream config to have max bytes set' },
  JSStreamMaxStreamBytesExceeded: { code: 400, errCode: 10122, description: 'stream max bytes exceeds account limit max stream bytes' },
  JSNoMessageFoundErr: { code: 404, errCode: 10037, description: 'no message found' },
  JSNotEmptyRequestErr: { code: 400, errCode: 10038, description: 'expected an empty request payload' },
  JSNotEnabledForAccountErr: { code: 503, errCode: 10039, description: 'JetStream not enabled for account' },
  JSClusterPeerNotMemberErr: { code: 400, errCode: 10040, description: 'peer not a member' },
  JSSequenceNotFoundErrF: { code: 400, errCode: 10043, description: 'sequence {seq} not found' },
  JSStorageResourcesExceededErr: { code: 500, errCode: 10047, description: 'insufficient storage resources available' },
  JSStreamCreateErrF: { code: 500, errCode: 10049, description: '{err}' },
  JSStreamGeneralErrorF: { code: 500, errCode: 10051, description: '{err}' },
  JSStreamInvalidConfigF: { code: 500, errCode: 10052, description: '{err}' },
  JSStreamMessageExceedsMaximumErr: { code: 400, errCode: 10054, description: 'message size exceeds maximum allowed' },
  JSStreamMismatchErr: { code: 400, errCode: 10056, description: 'stream name in subject does not match request' },
  JSStreamMsgDeleteFailedF: { code: 500, errCode: 10057, description: '{err}' },
  JSStreamNameExistErr: { code: 400, errCode: 10058, description: 'stream name already in use with a different configuration' },
  JSStreamNotFoundErr: { code: 404, errCode: 10059, description: 'stream not found' },
  JSStreamNotMatchErr: { code: 400, errCode: 10060, description: 'expected stream does not match' },
  JSStreamSubjectOverlapErr: { code: 400, errCode: 10065, description: 'subjects overlap with an existing stream' },
  JSStreamWrongLastMsgIDErrF: { code: 400, errCode: 10070, description: 'wrong last msg ID: {id}' },
  JSStreamWrongLastSequenceErrF: { code: 400, errCode: 10071, description: 'wrong last sequence: {seq}' },
  JSStreamReplicasNotSupportedErr: { code: 500, errCode: 10074, description: 'replicas > 1 not supported in non-clustered mode' },
  JSStreamStoreFailedF: { code: 503, errCode: 10077, description: '{err}' },
  JSConsumerConfigRequiredErr: { code: 400, errCode: 10078, description: 'consumer config required' },
  JSConsumerDeliverToWildcardsErr: { code: 400, errCode: 10079, description: 'consumer deliver subject has wildcards' },
  JSConsumerPushMaxWaitingErr: { code: 400, errCode: 10080, description: 'consumer in push mode can not set max waiting' },
  JSConsumerDeliverCycleErr: { code: 400, errCode: 10081, description: 'consumer deliver subject forms a cycle' },
  JSConsumerMaxPendingAckPolicyRequiredErr: { code: 400, errCode: 10082, description: 'consumer requires ack policy for max ack pending' },
  JSConsumerSmallHeartbeatErr: { code: 400, errCode: 10083, description: 'consumer idle heartbeat needs to be >= 100ms' },
  JSConsumerPullRequiresAckErr: { code: 400, errCode: 10084, description: 'consumer in pull mode requires explicit ack policy on workqueue stream' },
  JSConsumerPullWithRateLimitErr: { code: 400, errCode: 10086, description: 'consumer in pull mode can not have rate limit set' },
  JSConsumerMaxWaitingNegativeErr: { code: 400, errCode: 10087, description: 'consumer max waiting needs to be positive' },
  JSConsumerHBRequiresPushErr: { code: 400, errCode: 10088, description: 'consumer idle heartbeat requires a push based consumer' },
  JSConsumerFCRequiresPushErr: { code: 400, errCode: 10089, description: 'consumer flow control requires a push based consumer' },
  JSConsumerFilterNotSubsetErr: { code: 400, errCode: 10093, description: 'consumer filter subject is not a valid subset of the interest subjects' },
  JSConsumerInvalidPolicyErrF: { code: 400, errCode: 10094, description: '{err}' },
  JSConsumerInvalidSamplingErrF: { code: 400, errCode: 10095, description: 'failed to parse consumer sampling configuration: {err}' },
  JSStreamHeaderExceedsMaximumErr: { code: 400, errCode: 10097, description: 'header size exceeds maximum allowed of 64k' },
  JSConsumerWQRequiresExplicitAckErr: { code: 400, errCode: 10098, description: 'workqueue stream requires explicit ack' },
  JSConsumerWQMultipleUnfilteredErr: { code: 400, errCode: 10099, description: 'multiple non-filtered consumers not allowed on workqueue stream' },
  JSConsumerWQConsumerNotUniqueErr: { code: 400, errCode: 10100, description: 'filtered consumer not unique on workqueue stream' },
  JSConsumerWQConsumerNotDeliverAllErr: { code: 400, errCode: 10101, description: 'consumer must be deliver all on workqueue stream' },
  JSConsumerNameTooLongErrF: { code: 400, errCode: 10102, description: 'consumer name is too long, maximum allowed is {max}' },
  JSConsumerBadDurableNameErr: { code: 400, errCode: 10103, description: "durable name can not contain '.', '*', '>'" },
  JSConsumerExistingActiveErr: { code: 400, errCode: 10105, description: 'consumer already exists and is still active' },
  JSConsumerDescriptionTooLongErrF: { code: 400, errCode: 10107, description: 'consumer description is too long, maximum allowed is {max}' },
  JSConsumerWithFlowControlNeedsHeartbeats: { code: 400, errCode: 10108, description: 'consumer with flow control also needs heartbeats' },
  JSStreamSealedErr: { code: 400, errCode: 10109, description: 'invalid operation on sealed stream' },
  JSStreamPurgeFailedF: { code: 500, errCode: 10110, description: '{err}' },
  JSStreamRollupFailedF: { code: 500, errCode: 10111, description: '{err}' },
  JSConsumerInvalidDeliverSubject: { code: 400, errCode: 10112, description: 'invalid push consumer deliver subject' },
  JSConsumerMaxRequestBatchNegativeErr: { code: 400, errCode: 10114, description: 'consumer max request batch needs to be > 0' },
  JSConsumerMaxRequestExpiresTooSmall: { code: 400, errCode: 10115, description: 'consumer max request expires needs to be >= 1ms' },
  JSConsumerMaxDeliverBackoffErr: { code: 400, errCode: 10116, description: 'max deliver is required to be > length of backoff values' },
  JSConsumerMaxPendingAckExcessErrF: { code: 400, errCode: 10121, description: 'consumer max ack pending exceeds system limit of {limit}' },
  JSConsumerReplicasExceedsStream: { code: 400, errCode: 10126, description: 'consumer config replica count exceeds parent stream' },
  JSConsumerNameContainsPathSeparatorsErr: { code: 400, errCode: 10127, description: 'Consumer name can not contain path separators' },
  JSStreamNameContainsPathSeparatorsErr: { code: 400, errCode: 10128, description: 'Stream name can not contain path separators' },
  JSConsumerCreateFilterSubjectMismatchErr: { code: 400, errCode: 10131, description: 'Consumer create request did not match filtered subject from create subject' },
  JSConsumerCreateDurableAndNameMismatch: { code: 400, errCode: 10132, description: 'Consumer Durable and Name have to be equal if both are provided' },
  JSReplicasCountCannotBeNegative: { code: 400, errCode: 10133, description: 'replicas count cannot be negative' },
  JSConsumerReplicasShouldMatchStream: { code: 400, errCode: 10134, description: "consumer config replicas must match interest retention stream's replicas" },
  JSConsumerMetadataLengthErrF: { code: 400, errCode: 10135, description: 'consumer metadata exceeds maximum size of {limit}' },
  JSConsumerDuplicateFilterSubjects: { code: 400, errCode: 10136, description: 'consumer cannot have both FilterSubject and FilterSubjects specified' },
  JSConsumerMultipleFiltersNotAllowed: { code: 400, errCode: 10137, description: 'consumer with multiple subject filters cannot use subject based API' },
  JSConsumerOverlappingSubjectFilters: { code: 400, errCode: 10138, description: 'consumer subject filters cannot overlap' },
  JSConsumerEmptyFilter: { code: 400, errCode: 10139, description: 'consumer filter in FilterSubjects cannot be empty' },
  JSConsumerAlreadyExists: { code: 400, errCode: 10148, description: 'consumer already exists' },
  JSConsumerDoesNotExist: { code: 400, errCode: 10149, description: 'consumer does not exist' },
  JSConsumerInactiveThresholdExcess: { code: 400, errCode: 10153, description: 'consumer inactive threshold exceeds system limit of {limit}' },
  JSMessageTTLInvalidErr: { code: 400, errCode: 10165, description: 'invalid per-message TTL' },
  JSMessageTTLDisabledErr: { code: 400, errCode: 10166, description: 'per-message TTL is disabled' },
  JSMessageIncrDisabledErr: { code: 400, errCode: 10168, description: 'message counters is disabled' },
  JSMessageIncrMissingErr: { code: 400, errCode: 10169, description: 'message counter increment is missing' },
  JSMessageIncrPayloadErr: { code: 400, errCode: 10170, description: 'message counter has payload' },
  JSMessageIncrInvalidErr: { code: 400, errCode: 10171, description: 'message counter increment is invalid' },
  JSMessageCounterBrokenErr: { code: 400, errCode: 10172, description: 'message counter is broken' },
  JSMirrorWithCountersErr: { code: 400, errCode: 10173, description: 'stream mirrors can not also calculate counters' },
  JSAtomicPublishDisabledErr: { code: 400, errCode: 10174, description: 'atomic publish is disabled' },
  // Atomic batch publish (stream/atomic-batch.ts): processJetStreamAtomicBatchMsg and its header checks.
  JSAtomicPublishMissingSeqErr: { code: 400, errCode: 10175, description: 'atomic publish sequence is missing' },
  JSAtomicPublishIncompleteBatchErr: { code: 400, errCode: 10176, description: 'atomic publish batch is incomplete' },
  JSAtomicPublishUnsupportedHeaderBatchErr: { code: 400, errCode: 10177, description: 'atomic publish unsupported header used: {header}' },
  JSAtomicPublishInvalidBatchIDErr: { code: 400, errCode: 10179, description: 'atomic publish batch ID is invalid' },
  JSMirrorWithAtomicPublishErr: { code: 400, errCode: 10198, description: 'stream mirrors can not also use atomic publishing' },
  JSAtomicPublishTooLargeBatchErrF: { code: 400, errCode: 10199, description: 'atomic publish batch is too large: {size}' },
  JSAtomicPublishInvalidBatchCommitErr: { code: 400, errCode: 10200, description: 'atomic publish batch commit is invalid' },
  JSAtomicPublishContainsDuplicateMessageErr: { code: 400, errCode: 10201, description: 'atomic publish batch contains duplicate message id' },
  JSAtomicPublishTooManyInflight: { code: 429, errCode: 10210, description: 'atomic publish too many inflight' },
  // Fast batch publish (stream/fast-batch.ts): processJetStreamFastBatchMsg.
  JSBatchPublishDisabledErr: { code: 400, errCode: 10205, description: 'batch publish is disabled' },
  JSBatchPublishInvalidPatternErr: { code: 400, errCode: 10206, description: 'batch publish pattern is invalid' },
  JSBatchPublishInvalidBatchIDErr: { code: 400, errCode: 10207, description: 'batch publish ID is invalid' },
  JSBatchPublishUnknownBatchIDErr: { code: 400, errCode: 10208, description: 'batch publish ID unknown' },
  JSMirrorWithBatchPublishErr: { code: 400, errCode: 10209, description: 'stream mirrors can not also use batch publishing' },
  JSBatchPublishTooManyInflight: { code: 429, errCode: 10211, description: 'batch publish too many inflight' },
  JSStreamWrongLastSequenceConstantErr: { code: 400, errCode: 10164, description: 'wrong last sequence' },
  JSRequiredApiLevelErr: { code: 412, errCode: 10185, description: 'JetStream minimum api level required' },
  JSPedanticErrF: { code: 400, errCode: 10157, description: 'pedantic mode: {err}' },
  JSMessageSchedulesDisabledErr: { code: 400, errCode: 10188, description: 'message schedules is disabled' },
  JSMessageSchedulesPatternInvalidErr: { code: 400, errCode: 10189, description: 'message schedules pattern is invalid' },
  JSMessageSchedulesTargetInvalidErr: { code: 400, errCode: 10190, description: 'message schedules target is invalid' },
  JSMessageSchedulesTTLInvalidErr: { code: 400, errCode: 10191, description: 'message schedules invalid per-message TTL' },
  JSMessageSchedulesRollupInvalidErr: { code: 400, errCode: 10192, description: 'message schedules invalid rollup' },
  JSMessageSchedulesSourceInvalidErr: { code: 400, errCode: 10203, description: 'message schedules source is invalid' },
  JSMessageSchedulesTimeZoneInvalidErr: { code: 400, errCode: 10223, description: 'message schedules time zone is invalid' },
  JSStreamExpectedLastSeqPerSubjectInvalid: { code: 400, errCode: 10193, description: 'missing sequence for expected last sequence per subject' },
  JSConsumerPriorityPolicyWithoutGroup: { code: 400, errCode: 10159, description: 'Setting PriorityPolicy requires at least one PriorityGroup to be set' },
  JSConsumerInvalidPriorityGroupErr: { code: 400, errCode: 10160, description: 'Provided priority group does not exist for this consumer' },
  JSConsumerEmptyGroupName: { code: 400, errCode: 10161, description: 'Group name cannot be an empty string' },
  JSConsumerInvalidGroupNameErr: { code: 400, errCode: 10162, description: 'Valid priority group name must match A-Z, a-z, 0-9, -_/=)+ and may not exceed 16 characters' },
  JSConsumerPushWithPriorityGroupErr: { code: 400, errCode: 10178, description: 'priority groups can not be used with push consumers' },
  JSConsumerInvalidResetErr: { code: 400, errCode: 10204, description: 'invalid reset: {err}' },
  JSConsumerPriorityGroupWithPolicyNone: { code: 400, errCode: 10196, description: 'consumer can not have priority groups when policy is none' },
  JSConsumerPinnedTTLWithoutPriorityPolicyNone: { code: 400, errCode: 10197, description: 'PinnedTTL cannot be set when PriorityPolicy is none' },
  JSMessageSchedulesSchedulerInvalidErr: { code: 400, errCode: 10212, description: 'message schedules invalid scheduler' },
  // Mirrors and sources (topology/): checkStreamCfg, configUpdateCheck and the sourcing consumers.
  JSMirrorConsumerSetupFailedErrF: { code: 500, errCode: 10029, description: '{err}' },
  JSMirrorMaxMessageSizeTooBigErr: { code: 400, errCode: 10030, description: 'stream mirror must have max message size >= source' },
  JSMirrorWithSourcesErr: { code: 400, errCode: 10031, description: 'stream mirrors can not also contain other sources' },
  JSMirrorWithSubjectsErr: { code: 400, errCode: 10034, description: 'stream mirrors can not contain subjects' },
  JSSourceConsumerSetupFailedErrF: { code: 500, errCode: 10045, description: '{err}' },
  JSSourceMaxMessageSizeTooBigErr: { code: 400, errCode: 10046, description: 'stream source must have max message size >= target' },
  JSStreamMirrorNotUpdatableErr: { code: 400, errCode: 10055, description: 'stream mirror configuration can not be updated' },
  JSSourceDuplicateDetected: { code: 400, errCode: 10140, description: 'duplicate source configuration detected' },
  JSSourceInvalidStreamName: { code: 400, errCode: 10141, description: 'sourced stream name is invalid' },
  JSMirrorInvalidStreamName: { code: 400, errCode: 10142, description: 'mirrored stream name is invalid' },
  JSMirrorWithFirstSeqErr: { code: 400, errCode: 10143, description: 'stream mirrors can not have first sequence configured' },
  JSSourceMultipleFiltersNotAllowed: { code: 400, errCode: 10144, description: 'source with multiple subject transforms cannot also have a single subject filter' },
  JSSourceInvalidSubjectFilter: { code: 400, errCode: 10145, description: 'source transform source: {err}' },
  JSSourceInvalidTransformDestination: { code: 400, errCode: 10146, description: 'source transform: {err}' },
  JSSourceOverlappingSubjectFilters: { code: 400, errCode: 10147, description: 'source filters can not overlap' },
  JSMirrorMultipleFiltersNotAllowed: { code: 400, errCode: 10150, description: 'mirror with multiple subject transforms cannot also have a single subject filter' },
  JSMirrorInvalidSubjectFilter: { code: 400, errCode: 10151, description: 'mirror transform source: {err}' },
  JSMirrorOverlappingSubjectFilters: { code: 400, errCode: 10152, description: 'mirror subject filters can not overlap' },
  JSMirrorInvalidTransformDestination: { code: 400, errCode: 10154, description: 'mirror transform: {err}' },
  JSStreamTransformInvalidSource: { code: 400, errCode: 10155, description: 'stream transform source: {err}' },
  JSStreamTransformInvalidDestination: { code: 400, errCode: 10156, description: 'stream transform: {err}' },
} as const satisfies Record<string, JsErrorEntry>;

export type JsErrorName = keyof typeof JS_ERROR_TABLE;

/** The `{…}` placeholders of a description, as a union of their names. */
type Placeholders<S extends string> = S extends `${string}{${infer P}}${infer Rest}` ? P | Placeholders<Rest> : never;
type ParamsOf<N extends JsErrorName> = Placeholders<(typeof JS_ERROR_TABLE)[N]['description']>;
/** No argument for a fixed description; otherwise a value for each placeholder. */
export type JsErrorArgs<N extends JsErrorName> = [ParamsOf<N>] extends [never]
  ? []
  : [params: Record<ParamsOf<N>, string | number>];

const PLACEHOLDER = /\{(\w+)\}/g;

/** The ApiError of a table entry, its description's placeholders filled in (one pass, like Go's Replacer). */
export function jsError<N extends JsErrorName>(name: N, ...args: JsErrorArgs<N>): ApiError {
  const entry: JsErrorEntry = JS_ERROR_TABLE[name];
  const params = args[0] as Record<string, string | number> | undefined;
  const description =
    params === undefined
      ? entry.description
      : entry.description.replace(PLACEHOLDER, (whole, key: string) => (key in params ? String(params[key]) : whole));
  return new ApiError(entry.code, entry.errCode, description);
}

/**
 * 10025 with the decoder's reason, nats-server 2.10+'s `invalid JSON: {err}` — only where Flotilla reproduces
 * Go's reason verbatim (an unknown field); elsewhere JSInvalidJSONErr keeps 2.9's bare text.
 */
export function invalidJsonWithReason(reason: string): ApiError {
  const entry: JsErrorEntry = JS_ERROR_TABLE.JSInvalidJSONErr;
  return new ApiError(entry.code, entry.errCode, `${entry.description}: ${reason}`);
}
