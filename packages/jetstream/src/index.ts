export * from './message-bus.js';
export * from './api/api-error.js';
export * from './jetstream-context.js';
export * from './jetstream-service.js';
export * from './stream/stream-config-types.js';
export * from './stream/stream-handle.js';
export * from './consumer/consumer-service.js';
