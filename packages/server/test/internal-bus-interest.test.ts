import { describe, expect, it } from 'vitest';
import { InternalBus } from '../src/internal-bus.js';
import { MessageRouter } from '../src/message-router.js';
import { Subscription, type SubscriptionOwner } from '../src/subscription.js';

/** Stands for a client connection: any cid above 0. */
const client: SubscriptionOwner = { cid: 7, deliverMessage: () => undefined };

describe('client interest (what a push consumer delivers to)', () => {
  it('counts client subscriptions, plain or in a queue group, and never the server’s own', () => {
    const router = new MessageRouter();
    const bus = new InternalBus(router);
    const stopCapture = bus.subscribe('orders.>', () => undefined);
    expect(bus.hasInterest('orders.new')).toBe(true);
    expect(bus.hasClientInterest('orders.new')).toBe(false);

    const plain = new Subscription(client, 'orders.*', null, '1');
    router.subscribe(plain);
    expect(bus.hasClientInterest('orders.new')).toBe(true);
    router.unsubscribe(plain);
    expect(bus.hasClientInterest('orders.new')).toBe(false);

    bus.subscribe('orders.new', () => undefined, 'workers');
    expect(bus.hasClientInterest('orders.new')).toBe(false);
    router.subscribe(new Subscription(client, 'orders.new', 'workers', '2'));
    expect(bus.hasClientInterest('orders.new')).toBe(true);
    stopCapture();
    expect(bus.hasClientInterest('other')).toBe(false);
  });
});
