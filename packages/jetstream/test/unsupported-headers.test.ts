// The 2.11–2.14 publish headers, on a stream that does not allow their features (every Flotilla stream):
// refused with the PubAck error nats-server 2.14 sends, or ignored where 2.14 ignores them.
import { afterEach, describe, expect, it } from 'vitest';
import { encodeHeaders } from '@flotilla/protocol';
import { screenPublish, type PublishView } from '../src/stream/publish-checks.js';
import { requiredApiLevelError } from '../src/api/api-level.js';
import { ReplicaCluster } from './stream-replica-harness.js';

function view(over: Partial<PublishView> = {}): PublishView {
  return {
    name: 'S',
    sealed: false,
    allowRollup: false,
    denyPurge: false,
    lastSeq: () => 10,
    lastSeqForSubject: (s) => (s === 'a' ? 7 : s === 'other' ? 3 : 0),
    lastMsgId: () => '',
    duplicateOf: () => undefined,
    ...over,
  };
}

const screen = (entries: Array<[string, string]>, v: PublishView = view()) => screenPublish(v, 'a', encodeHeaders({ entries }));
const refusal = (code: number, errCode: number, description: string) => ({ kind: 'reject', error: { code, errCode, description } });
const STORE = { kind: 'store', msgId: undefined, rollup: undefined };

describe('2.11+ publish headers on a stream without their features', () => {
  it.each([
    ['Nats-TTL', [['Nats-TTL', '5s']], refusal(400, 10166, 'per-message TTL is disabled')],
    ['Nats-TTL never', [['Nats-TTL', 'never']], refusal(400, 10166, 'per-message TTL is disabled')],
    ['Nats-TTL invalid (the clustered check refuses it too)', [['Nats-TTL', 'soon']], refusal(400, 10166, 'per-message TTL is disabled')],
    ['Nats-Incr', [['Nats-Incr', '+5']], refusal(400, 10168, 'message counters is disabled')],
    ['Nats-Incr not an integer', [['Nats-Incr', '1.5']], refusal(400, 10171, 'message counter increment is invalid')],
    ['Nats-Batch-Id', [['Nats-Batch-Id', 'b1'], ['Nats-Batch-Sequence', '1']], refusal(400, 10174, 'atomic publish is disabled')],
    ['Nats-Schedule', [['Nats-Schedule', '@every 1s'], ['Nats-Schedule-Target', 'a.b']], refusal(400, 10188, 'message schedules is disabled')],
    ['Nats-Schedule invalid', [['Nats-Schedule', 'whenever']], refusal(400, 10188, 'message schedules is disabled')],
    ['Nats-Schedule-Time-Zone not a zone', [['Nats-Schedule-Time-Zone', 'Mars/Olympus']], refusal(400, 10188, 'message schedules is disabled')],
    ['Nats-Schedule-Next purge', [['Nats-Schedule-Next', 'purge'], ['Nats-Scheduler', 'sched.x']], refusal(400, 10188, 'message schedules is disabled')],
    ['Nats-Schedule-Next other', [['Nats-Schedule-Next', 'later'], ['Nats-Scheduler', 'sched.x']], refusal(400, 10212, 'message schedules invalid scheduler')],
    ['Nats-Schedule-Next without scheduler', [['Nats-Schedule-Next', 'purge']], refusal(400, 10212, 'message schedules invalid scheduler')],
    ['Nats-Schedule-Next with a wildcard scheduler', [['Nats-Schedule-Next', 'purge'], ['Nats-Scheduler', 'sched.*']], refusal(400, 10212, 'message schedules invalid scheduler')],
    ['Nats-Scheduler alone', [['Nats-Scheduler', 'sched.x']], refusal(400, 10212, 'message schedules invalid scheduler')],
    [
      'Nats-Expected-Last-Subject-Sequence-Subject without the sequence',
      [['Nats-Expected-Last-Subject-Sequence-Subject', 'other']],
      refusal(400, 10193, 'missing sequence for expected last sequence per subject'),
    ],
  ] as const)('%s', (_name, entries, expected) => {
    expect(screen(entries as unknown as Array<[string, string]>)).toMatchObject(expected);
  });

  it.each([
    ['empty Nats-TTL', [['Nats-TTL', '']]],
    ['empty Nats-Incr', [['Nats-Incr', '']]],
    ['Nats-Batch-Sequence and Nats-Batch-Commit without Nats-Batch-Id', [['Nats-Batch-Sequence', '1'], ['Nats-Batch-Commit', '1']]],
    ['a valid Nats-Schedule-Time-Zone without Nats-Schedule', [['Nats-Schedule-Time-Zone', 'Europe/Amsterdam']]],
    ['Nats-Schedule-TTL and -Target without Nats-Schedule', [['Nats-Schedule-TTL', '5s'], ['Nats-Schedule-Target', 'a.b']]],
    ['Nats-Required-Api-Level on a plain publish', [['Nats-Required-Api-Level', '9']]],
    ['header names are exact-case', [['nats-ttl', '5s']]],
  ] as const)('%s is stored as 2.14 stores it', (_name, entries) => {
    expect(screen(entries as unknown as Array<[string, string]>)).toEqual(STORE);
  });

  it.each([
    ['an invalid value', 'soon', refusal(400, 10165, 'invalid per-message TTL')],
    ['a duration below 1s', '500ms', refusal(400, 10165, 'invalid per-message TTL')],
    ['a bare 0 (a Go duration below 1s)', '0', refusal(400, 10165, 'invalid per-message TTL')],
    ['a negative duration', '-5s', refusal(400, 10165, 'invalid per-message TTL')],
    ['a duration of 1s', '1s', STORE],
    ['a Go duration', '1m30s', STORE],
    ['plain seconds', '90', STORE],
    ['never', 'NEVER', STORE],
    ['digits making 0 (no TTL)', '00', STORE],
  ] as const)('with allow_msg_ttl, Nats-TTL %s: %s', (_name, value, expected) => {
    expect(screen([['Nats-TTL', value]], view({ allowMsgTtl: true }))).toMatchObject(expected);
  });

  it('a batch on a sealed stream is answered sealed, as the batch path checks that first', () => {
    expect(screen([['Nats-Batch-Id', 'b1']], view({ sealed: true }))).toMatchObject(refusal(400, 10109, 'invalid operation on sealed stream'));
  });

  it('Nats-Expected-Last-Subject-Sequence-Subject names the subject the sequence check reads', () => {
    const withSubject = (seq: string) => screen([['Nats-Expected-Last-Subject-Sequence', seq], ['Nats-Expected-Last-Subject-Sequence-Subject', 'other']]);
    expect(withSubject('3')).toEqual(STORE);
    expect(withSubject('7')).toMatchObject(refusal(400, 10071, 'wrong last sequence: 3'));
  });
});

describe('the same refusals on a replicated (R3) stream', () => {
  let cluster: ReplicaCluster | null = null;
  afterEach(async () => {
    await cluster?.close();
    cluster = null;
  });

  it('the leader answers Nats-TTL and Nats-Batch-Id with the errors of 2.14 and proposes nothing', async () => {
    const c = (cluster = await ReplicaCluster.start({ name: 'S', subjects: ['s.>'], storage: 'memory', num_replicas: 3 }));
    await c.waitForLeader();
    const ttl = c.publish('s.a', 'x', encodeHeaders({ entries: [['Nats-TTL', '1h']] }));
    const batch = c.publish('s.a', 'x', encodeHeaders({ entries: [['Nats-Batch-Id', 'b'], ['Nats-Batch-Sequence', '1']] }));
    const plain = c.publish('s.a', 'x');
    const [ackTtl, ackBatch, ackPlain] = await c.waitForAcks([ttl, batch, plain]);
    expect(ackTtl).toEqual({ error: { code: 400, err_code: 10166, description: 'per-message TTL is disabled' }, stream: 'S', seq: 0 });
    expect(ackBatch).toEqual({ error: { code: 400, err_code: 10174, description: 'atomic publish is disabled' }, stream: 'S', seq: 0 });
    expect(ackPlain).toEqual({ stream: 'S', seq: 1 });
    expect((await c.waitConverged()).map((m) => m.seq)).toEqual([1]);
  });
});

describe('Nats-Required-Api-Level on an API request (2.14 errorOnRequiredApiLevel)', () => {
  const level = (v: string) => requiredApiLevelError(encodeHeaders({ entries: [['Nats-Required-Api-Level', v]] }))?.toJSON() ?? null;
  const REQUIRED = { code: 412, err_code: 10185, description: 'JetStream minimum api level required' };

  it('a level above 2 (nats-server 2.12) or not an integer is refused; none, empty, 0 to 2 pass', () => {
    expect(level('3')).toEqual(REQUIRED);
    expect(level('4')).toEqual(REQUIRED);
    expect(level('2')).toBeNull();
    expect(level('1')).toBeNull();
    expect(level('one')).toEqual(REQUIRED);
    expect(level('0')).toBeNull();
    expect(level('-1')).toBeNull();
    expect(level('')).toBeNull();
    expect(requiredApiLevelError(null)).toBeNull();
    expect(requiredApiLevelError(encodeHeaders({ entries: [['Nats-Msg-Id', 'x']] }))).toBeNull();
  });
});
