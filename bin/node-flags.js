// Node/V8 flags the broker runs with; every launcher (bin/flotilla.js's shebang, npm start, the test
// harness, the benches) uses these. Measured on a 2-core machine under core pub/sub load: V8's parallel
// scavenger hands work to helper threads with futex round trips that cost more than they save when the
// clients compete for the same cores — --single-threaded-gc cut the server's CPU per million 128 B
// messages from 1.7–2.4 s to 1.05–1.17 s (nats-server 2.9.10: 0.9–1.5 s). See docs/architecture.md.
export const FLOTILLA_NODE_FLAGS = ['--single-threaded-gc'];
