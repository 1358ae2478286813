export * from './client-parser.js';
export * from './encoder.js';
export * from './errors.js';
export * from './headers.js';
export * from './sublist.js';
export * from './subject.js';
export * from './subject-relations.js';
export * from './subject-transform.js';
