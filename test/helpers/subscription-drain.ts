// What a subscription of the stock v2 client received within a short wait after the publishers flushed,
// as "subject:payload" strings; the subscription is closed. For tests asserting what did (not) arrive.
import { StringCodec, type Subscription } from 'nats';
import { sleep } from './flotilla-process.js';

const sc = StringCodec();

export async function drain(sub: Subscription, waitMs = 250): Promise<string[]> {
  await sleep(waitMs);
  sub.unsubscribe();
  const got: string[] = [];
  for await (const m of sub) got.push(`${m.subject}:${sc.decode(m.data)}`);
  return got;
}
