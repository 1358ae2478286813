// The nats-server release whose observable behaviour Flotilla implements, and Flotilla's own version.
// ADVERTISED_NATS_VERSION is defined next to the JetStream API level it goes with (jetstream's api-level.ts,
// which `_nats.ver` also shows); docs/compatibility.md says why it is the release it is, and
// test/compatibility-table.test.ts keeps the two in step.
export { ADVERTISED_NATS_VERSION, JS_API_LEVEL } from '@flotilla/jetstream';
export const FLOTILLA_VERSION = '0.1.0';
export const PROTOCOL_VERSION = 1;
