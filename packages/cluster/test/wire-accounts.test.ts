// The account a frame belongs to on the wire: absent (and not one byte longer) for the global account,
// named for every other; the hand-written codec and protobufjs agree on it.
import { describe, it, expect } from 'vitest';
import { decodeBatch, decodeBatchReference, encodeBatch, encodeBatchReference, type Frame } from '@flotilla/cluster';

const hex = (fs: Frame[]) => fs.map((f) => ('msg' in f ? { msg: { ...f.msg, message: Buffer.from(f.msg.message).toString('hex') } } : f));

describe('accounts on the wire', () => {
  it('a routed message and an interest update carry their account; the global account has no key at all', () => {
    const frames: Frame[] = [
      { msg: { subject: 'orders.new', reply: '_INBOX.x', message: Buffer.from('body'), headerBytes: -1, queues: ['q'], route: '', account: 'A' } },
      { msg: { subject: 'orders.new', reply: '', message: Buffer.from('g'), headerBytes: -1, queues: [], route: '' } },
      { interest: { full: true, entries: [{ subject: 'orders.>', queue: '', count: 1, clients: 1 }], account: 'TEAM-ü' } },
      { interest: { full: false, entries: [{ subject: 'x', queue: 'q', count: 0, clients: 0 }] } },
    ];
    const ours = encodeBatch(frames);
    expect(ours.equals(encodeBatchReference(frames))).toBe(true);
    const back = decodeBatch(ours);
    expect(hex(back)).toEqual(hex(frames));
    expect(hex(decodeBatchReference(ours))).toEqual(hex(frames));
    expect('account' in (back[1] as { msg: object }).msg).toBe(false);
    expect('account' in (back[3] as { interest: object }).interest).toBe(false);
  });

  it('an empty account name is the global account: the same bytes as none', () => {
    const plain: Frame = { msg: { subject: 's', reply: '', message: Buffer.from('m'), headerBytes: -1, queues: [], route: '' } };
    const empty: Frame = { msg: { subject: 's', reply: '', message: Buffer.from('m'), headerBytes: -1, queues: [], route: '', account: '' } };
    expect(encodeBatch([empty]).equals(encodeBatch([plain]))).toBe(true);
    expect(encodeBatch([{ msg: { ...plain.msg, account: 'A' } }]).length).toBe(encodeBatch([plain]).length + 3);
  });

  it('Hello says the sender reads account names only when it does', () => {
    const hello = { clusterName: 'c', serverName: 'n', serverId: 'I', clientUrl: 'h:1', clusterUrl: 'h:2', raftNodeId: 1, version: 1 };
    const [withAccounts] = decodeBatch(encodeBatch([{ hello: { ...hello, accounts: true } }]));
    const [without] = decodeBatch(encodeBatch([{ hello }]));
    expect((withAccounts as { hello: { accounts?: boolean } }).hello.accounts).toBe(true);
    expect((without as { hello: { accounts?: boolean } }).hello.accounts).toBeUndefined();
  });
});
