// The operation of a `$JS.API.…` subject as a bounded label (`STREAM.CREATE`, `CONSUMER.MSG.NEXT`, …), from
// JetStream's endpoint table: names and other variable tokens are dropped, a subject of no endpoint is `OTHER`.
export { API_OPERATION_LABELS, apiOperationOf, apiOperationOfResponseType } from '@flotilla/jetstream';
