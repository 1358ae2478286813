// The bounded `operation` label of the JetStream API metrics (packages/server/src/jetstream-api-operation.ts).
import { describe, it, expect } from 'vitest';
import { API_OPERATION_LABELS, apiOperationOf, apiOperationOfResponseType } from '../packages/server/src/jetstream-api-operation.js';

describe('JetStream API operation labels', () => {
  it('names the operation of a request subject without its variable tokens', () => {
    expect(apiOperationOf('$JS.API.INFO')).toBe('INFO');
    expect(apiOperationOf('$JS.API.STREAM.CREATE.ORDERS')).toBe('STREAM.CREATE');
    expect(apiOperationOf('$JS.API.STREAM.MSG.GET.ORDERS')).toBe('STREAM.MSG.GET');
    expect(apiOperationOf('$JS.API.STREAM.NAMES')).toBe('STREAM.NAMES');
    expect(apiOperationOf('$JS.API.CONSUMER.CREATE.ORDERS.worker.orders.>')).toBe('CONSUMER.CREATE');
    expect(apiOperationOf('$JS.API.CONSUMER.DURABLE.CREATE.ORDERS.worker')).toBe('CONSUMER.DURABLE.CREATE');
    expect(apiOperationOf('$JS.API.CONSUMER.MSG.NEXT.ORDERS.worker')).toBe('CONSUMER.MSG.NEXT');
    expect(apiOperationOf('$JS.API.DIRECT.GET.KV_x.$KV.x.k')).toBe('DIRECT.GET');
    expect(apiOperationOf('$JS.hub.API.STREAM.INFO.S')).toBe('STREAM.INFO');
    // A stream named like an operation token does not change the label.
    expect(apiOperationOf('$JS.API.STREAM.INFO.LEADER')).toBe('STREAM.INFO');
    expect(apiOperationOf('$JS.API.SOMETHING.NEW')).toBe('OTHER');
    expect(apiOperationOf('$JS.API')).toBe('OTHER');
  });

  it('maps error response types to the same labels', () => {
    expect(apiOperationOfResponseType('io.nats.jetstream.api.v1.stream_create_response')).toBe('STREAM.CREATE');
    expect(apiOperationOfResponseType('io.nats.jetstream.api.v1.stream_msg_get_response')).toBe('STREAM.MSG.GET');
    expect(apiOperationOfResponseType('io.nats.jetstream.api.v1.account_info_response')).toBe('INFO');
    expect(apiOperationOfResponseType('io.nats.jetstream.api.v1.stream_remove_peer_response')).toBe('STREAM.PEER.REMOVE');
    expect(apiOperationOfResponseType('io.nats.jetstream.api.v1.consumer_leader_stepdown_response')).toBe('CONSUMER.LEADER.STEPDOWN');
    expect(apiOperationOfResponseType('io.nats.jetstream.api.v1.whatever_response')).toBe('OTHER');
    expect(apiOperationOfResponseType('garbage')).toBe('OTHER');
    expect(new Set(API_OPERATION_LABELS).size).toBe(API_OPERATION_LABELS.length);
  });
});
