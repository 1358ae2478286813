export * from './config/options.js';
export { FlotillaServer } from './server.js';
export { main } from './main.js';
export { ADVERTISED_NATS_VERSION, FLOTILLA_VERSION } from './version.js';
