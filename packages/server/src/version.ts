// The nats-server release whose observable behaviour Flotilla implements. Clients gate features on it
// (nats.js turns on consumer names, direct get, filter_subjects … by version), so it is a 2.10.x release.
export const ADVERTISED_NATS_VERSION = '2.10.0';
export const FLOTILLA_VERSION = '0.1.0';
export const PROTOCOL_VERSION = 1;
