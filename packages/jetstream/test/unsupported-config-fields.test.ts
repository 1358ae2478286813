// Every nats-server 2.14 config field is known: one Flotilla does not implement is refused by name (10052),
// its default value passes, a wrong type is invalid JSON, and a field 2.14 does not know is refused the way
// 2.14's strict decoder refuses it.
import { describe, expect, it } from 'vitest';
import { ApiError } from '../src/api/api-error.js';
import { applyConsumerDefaults, checkConsumerConfig, consumerRequestFieldError, parseConsumerConfig } from '../src/consumer/consumer-config.js';
import { normaliseStreamConfig, parseStreamConfigRequest } from '../src/stream/stream-config.js';
import { UNSUPPORTED_CONFIG_FIELDS } from '../src/stream/unsupported-config-fields.js';
import { parsePullRequest } from '../src/consumer/pull-request.js';
import { pullPriorityRefusal } from '../src/consumer/priority-groups.js';

type Wire = { code: number; err_code: number; description: string };

function streamError(body: object): Wire | null {
  try {
    normaliseStreamConfig(parseStreamConfigRequest({ name: 'S', ...body }));
    return null;
  } catch (err) {
    if (!(err instanceof ApiError)) throw err;
    return err.toJSON();
  }
}

function consumerError(config: object): Wire | null {
  const parsed = parseConsumerConfig(config);
  return parsed instanceof ApiError ? parsed.toJSON() : null;
}

const refused = (kind: string, field: string): Wire => ({
  code: 500,
  err_code: 10052,
  description: `${kind} configuration field '${field}' is not supported`,
});
const refusedValue = (kind: string, field: string, value: string): Wire => ({
  code: 500,
  err_code: 10052,
  description: `${kind} configuration field '${field}' value '${value}' is not supported`,
});
const INVALID_JSON: Wire = { code: 400, err_code: 10025, description: 'invalid JSON' };
const unknownField = (field: string): Wire => ({ code: 400, err_code: 10025, description: `invalid JSON: json: unknown field "${field}"` });

describe('stream config fields Flotilla does not implement', () => {
  it.each([
  ])('%s is refused by name', (field, body) => {
    expect(streamError(body)).toEqual(refused('stream', field));
  });

  it('default values ask for nothing and pass, leaving the config as without them', () => {
    const plain = normaliseStreamConfig(parseStreamConfigRequest({ name: 'S' }));
    const defaults = {
      name: 'S',
      sources: [],
      mirror: null,
      subject_transform: null,
      republish: null,
      allow_msg_ttl: false,
      subject_delete_marker_ttl: 0,
      allow_msg_counter: false,
      allow_atomic: false,
      allow_msg_schedules: false,
      persist_mode: 'default',
      allow_batched: false,
      pedantic: false,
    };
    expect(normaliseStreamConfig(parseStreamConfigRequest(defaults))).toEqual(plain);
    expect(normaliseStreamConfig(parseStreamConfigRequest({ name: 'S', persist_mode: '' }))).toEqual(plain);
  });

  it.each([
    ['allow_msg_ttl', 'yes'],
    ['subject_delete_marker_ttl', '1m'],
    ['allow_atomic', 1],
    ['persist_mode', 'sometimes'],
    ['sources', { name: 'X' }],
    ['mirror', 'ORIGIN'],
  ])('%s with a wrong JSON type is invalid JSON', (field, value) => {
    expect(streamError({ [field]: value })).toEqual(INVALID_JSON);
  });

  it('the first refused field in nats-server struct order is the one named', () => {
    // Listed after it in the request, but ack_policy comes first in ConsumerConfig.
    expect(consumerError({ durable_name: 'D', sourcing: true, ack_policy: 'flow_control' })).toEqual(refusedValue('consumer', 'ack_policy', 'flow_control'));
  });

  it("placement.preferred is refused with nats-server's own error; cluster and tags are kept, empty ones omitted", () => {
    expect(streamError({ placement: { preferred: 'n2' } })).toEqual({
      code: 500,
      err_code: 10052,
      description: 'preferred server not permitted in placement',
    });
    expect(normaliseStreamConfig(parseStreamConfigRequest({ name: 'S', placement: { cluster: 'c', tags: ['a'], preferred: '' } })).placement).toEqual({
      cluster: 'c',
      tags: ['a'],
    });
    // 2.14 drops an empty placement.
    expect(normaliseStreamConfig(parseStreamConfigRequest({ name: 'S', placement: { cluster: '', tags: [] } }))).not.toHaveProperty('placement');
    expect(streamError({ placement: { tags: 'a' } })).toEqual(INVALID_JSON);
  });

  it('a field 2.14 does not know is refused as its strict decoder does, at any level it decodes', () => {
    expect(streamError({ max_msg: 5 })).toEqual(unknownField('max_msg'));
    expect(streamError({ placement: { zone: 'a' } })).toEqual(unknownField('zone'));
    expect(streamError({ consumer_limits: { max_deliver: 3 } })).toEqual(unknownField('max_deliver'));
    // Exact names: Go would map "Name" to name, Flotilla refuses it rather than drop it.
    expect(streamError({ Subjects: ['a'] })).toEqual(unknownField('Subjects'));
  });

  it('every 2.14 field Flotilla implements still parses', () => {
    const cfg = normaliseStreamConfig(
      parseStreamConfigRequest({
        name: 'S',
        description: 'd',
        subjects: ['s.>'],
        retention: 'limits',
        max_consumers: 0,
        max_msgs: 0,
        max_bytes: 0,
        max_age: 0,
        max_msgs_per_subject: 2,
        max_msg_size: 0,
        discard: 'new',
        storage: 'memory',
        num_replicas: 1,
        no_ack: false,
        duplicate_window: 0,
        placement: { cluster: 'c' },
        compression: 's2',
        first_seq: 5,
        allow_direct: true,
        mirror_direct: false,
        discard_new_per_subject: true,
        sealed: false,
        deny_delete: true,
        deny_purge: false,
        allow_rollup_hdrs: true,
        consumer_limits: { inactive_threshold: 0, max_ack_pending: 10 },
        metadata: { k: 'v' },
      }),
    );
    expect(cfg).toMatchObject({ compression: 's2', first_seq: 5, discard_new_per_subject: true, consumer_limits: { max_ack_pending: 10 } });
  });
});

describe('consumer config fields Flotilla does not implement', () => {
  it.each([
    ['sourcing', { sourcing: true }],
  ])('%s is refused by name', (field, config) => {
    expect(consumerError({ durable_name: 'D', ...config })).toEqual(refused('consumer', field));
  });

  it("priority_groups and priority_timeout without a policy get 2.14's own errors (checkConsumerCfg)", () => {
    const stream = normaliseStreamConfig(parseStreamConfigRequest({ name: 'S' }));
    const check = (config: object) => {
      const parsed = parseConsumerConfig({ durable_name: 'D', ack_policy: 'explicit', ...config });
      if (parsed instanceof ApiError) return parsed.toJSON();
      applyConsumerDefaults(parsed, stream);
      return checkConsumerConfig(parsed, stream)?.toJSON() ?? null;
    };
    expect(check({ priority_groups: ['jobs'] })).toEqual({ code: 400, err_code: 10196, description: 'consumer can not have priority groups when policy is none' });
    expect(check({ priority_groups: ['jobs'], priority_policy: 'none' })).toEqual({
      code: 400,
      err_code: 10196,
      description: 'consumer can not have priority groups when policy is none',
    });
    expect(check({ priority_timeout: 120_000_000_000 })).toEqual({ code: 400, err_code: 10197, description: 'PinnedTTL cannot be set when PriorityPolicy is none' });
    // 2.14's defaults zero a negative pinned TTL; empty groups ask for nothing.
    expect(check({ priority_timeout: -1, priority_groups: [] })).toBeNull();
    // With a policy (priority-groups.ts), groups are required and checked.
    expect(check({ priority_groups: ['jobs'], priority_policy: 'overflow' })).toBeNull();
    expect(check({ priority_policy: 'overflow' })).toEqual({ code: 400, err_code: 10159, description: 'Setting PriorityPolicy requires at least one PriorityGroup to be set' });
  });

  it.each([
    ['ack_policy', 'flow_control'],
  ])('%s %s is refused with its value', (field, value) => {
    expect(consumerError({ durable_name: 'D', [field]: value })).toEqual(refusedValue('consumer', field, value));
  });

  it('default values ask for nothing and pass', () => {
    const plain = parseConsumerConfig({ durable_name: 'D', ack_policy: 'explicit' });
    const withDefaults = parseConsumerConfig({
      durable_name: 'D',
      ack_policy: 'explicit',
      sourcing: false,
      pause_until: '0001-01-01T00:00:00Z',
      priority_groups: [],
      priority_policy: 'none',
      priority_timeout: 0,
    });
    expect(withDefaults).toEqual(plain);
    // A pause that has already ended is kept, as 2.14 keeps it (it pauses nothing: consumer-pause tests).
    expect(parseConsumerConfig({ durable_name: 'D', ack_policy: 'explicit', pause_until: '2020-01-01T00:00:00Z' })).toEqual({ ...plain, pause_until: '2020-01-01T00:00:00Z' });
    expect(parseConsumerConfig({ durable_name: 'D', pause_until: null, priority_groups: null })).toEqual(parseConsumerConfig({ durable_name: 'D' }));
  });

  it.each([
    ['pause_until', 'tomorrow'],
    ['priority_groups', 'jobs'],
    ['priority_groups', [1]],
    ['priority_policy', 'fifo'],
    ['priority_timeout', '2m'],
    ['sourcing', 'yes'],
  ])('%s with a wrong JSON type or value is invalid JSON', (field, value) => {
    expect(consumerError({ durable_name: 'D', [field]: value })).toEqual(INVALID_JSON);
  });

  it('a wrong type elsewhere is invalid JSON before a refusal, as Go decodes the whole body first', () => {
    expect(consumerError({ durable_name: 'D', priority_groups: ['jobs'], max_deliver: 'x' })).toEqual(INVALID_JSON);
  });

  it("deliver_policy 'undefined' is deliver all, as 2.14 decodes it", () => {
    expect(parseConsumerConfig({ deliver_policy: 'undefined' })).toMatchObject({ deliver_policy: 'all' });
  });

  it('a field 2.14 does not know is refused as its strict decoder does', () => {
    expect(consumerError({ durable_name: 'D', max_deliveries: 3 })).toEqual(unknownField('max_deliveries'));
  });

  it('the create request: unknown fields are invalid JSON, the rest (pedantic mode included) pass', () => {
    expect(consumerRequestFieldError({ stream_name: 'S', config: {}, consumer: 'x' })?.toJSON()).toEqual(unknownField('consumer'));
    expect(consumerRequestFieldError({ stream_name: 'S', config: {}, pedantic: true })).toBeNull();
    expect(consumerRequestFieldError({ stream_name: 'S', config: {}, action: 'create', pedantic: false })).toBeNull();
  });
});

describe('the table', () => {
  it('names each field once per scope, with the issue that implements it', () => {
    const keys = UNSUPPORTED_CONFIG_FIELDS.map((r) => `${r.scope}/${r.field}`);
    expect(new Set(keys).size).toBe(keys.length);
    for (const row of UNSUPPORTED_CONFIG_FIELDS) expect([19, 20]).toContain(row.issue);
  });
});

describe('2.11+ priority fields of a pull request, on a consumer with priority policy none', () => {
  const pull = (body: object) => {
    const parsed = parsePullRequest(Buffer.from(JSON.stringify(body)));
    if ('error' in parsed) return parsed;
    const refusal = pullPriorityRefusal({ deliver_policy: 'all', ack_policy: 'explicit', replay_policy: 'instant', num_replicas: 0 }, parsed.priority, '');
    if (refusal !== null) return { error: refusal.text.replace('Bad Request - ', '') };
    const { priority: _priority, ...rest } = parsed;
    return rest;
  };
  it.each([
    [{ batch: 1, min_pending: 5 }, 'Not a Overflow Priority consumer'],
    [{ batch: 1, min_ack_pending: 1 }, 'Not a Overflow Priority consumer'],
    [{ batch: 1, id: 'pin-1' }, 'Not a Pinned Client Priority consumer'],
    [{ batch: 1, priority: 10 }, 'Priority must be between 0 and 9'],
    [{ batch: 1, priority: -1 }, 'Priority must be between 0 and 9'],
  ])('%j is refused as 2.14 refuses it', (body, error) => {
    expect(pull(body)).toEqual({ error });
  });

  it('group alone, and the zero values, are ignored as 2.14 ignores them', () => {
    expect(pull({ batch: 2, group: 'jobs', min_pending: 0, id: '', priority: 0 })).toEqual({ batch: 2, maxBytes: 0, noWait: false, expiresNs: 0, heartbeatNs: 0 });
  });
});
