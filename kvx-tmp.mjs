import { connect } from '@nats-io/transport-node';
import { Kvm } from '@nats-io/kv';
const nc = await connect({ servers: process.argv[2] });
const kvm = new Kvm(nc);
const origin = await kvm.create('origin', { history: 3 });
await origin.put('a', 'A1'); await origin.put('b', 'B1'); await origin.put('a', 'A2');
try {
  const m = await kvm.create('mir', { mirror: { name: 'origin' } });
  await new Promise(r => setTimeout(r, 1500));
  const e = await m.get('a');
  console.log('mirror get a', e && new TextDecoder().decode(e.value), e?.revision, e?.key);
  const keys = []; for await (const k of await m.keys()) keys.push(k); console.log('mirror keys', keys);
  const st = await m.status(); console.log('mirror values', st.values);
} catch (e) { console.log('mirror ERR', e.message); }
try {
  const s = await kvm.create('agg', { sources: [{ name: 'origin' }] });
  await new Promise(r => setTimeout(r, 1500));
  const e = await s.get('a');
  console.log('source get a', e && new TextDecoder().decode(e.value), e?.revision, e?.key);
  const keys = []; for await (const k of await s.keys()) keys.push(k); console.log('source keys', keys);
  await s.put('c', 'C1'); console.log('source own put ok', new TextDecoder().decode((await s.get('c')).value));
} catch (e) { console.log('source ERR', e.message); }
await nc.close();
