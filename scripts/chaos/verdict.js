// The final judgement: every acknowledged publish stored exactly once on every replica at its acknowledged
// sequence, replicas identical, per-publisher order kept in the store, every acknowledged message delivered
// at least once, consumer state equal on every replica. Violations are counted by type with a few examples.
const EXAMPLES_PER_TYPE = 10;

import { checkTopology } from './topology-check.js';
class Violations {
  constructor() {
    this.counts = new Map();
    this.examples = new Map();
  }
  add(type, detail) {
    this.counts.set(type, (this.counts.get(type) ?? 0) + 1);
    const ex = this.examples.get(type) ?? [];
    if (ex.length < EXAMPLES_PER_TYPE) ex.push(detail);
    this.examples.set(type, ex);
  }
  get total() {
    let n = 0;
    for (const c of this.counts.values()) n += c;
    return n;
  }
  toJSON() {
    return {
      total: this.total,
      byType: Object.fromEntries(this.counts),
      examples: Object.fromEntries(this.examples),
    };
  }
}

const ID_PATTERN = /^(.+)\.p(\d+)\.(\d+)$/;

function checkReplica(v, stream, replica, read, acks) {
  const seqsOf = new Map(); // id -> seqs on this replica
  const lastKOf = new Map(); // publisher -> last id index seen in sequence order
  const seqs = [...read.messages.keys()].sort((a, b) => a - b);
  for (const seq of seqs) {
    const id = read.messages.get(seq);
    const m = ID_PATTERN.exec(id);
    if (!m || m[1] !== stream) {
      v.add('foreign-message', { stream, replica, seq, id });
      continue;
    }
    const list = seqsOf.get(id) ?? [];
    list.push(seq);
    seqsOf.set(id, list);
    const publisher = Number(m[2]);
    const k = Number(m[3]);
    const lastK = lastKOf.get(publisher) ?? -1;
    // A publisher sends id k+1 only after id k was acknowledged, so the store must hold them in order.
    if (k <= lastK && list.length === 1) v.add('order', { stream, replica, seq, id, afterIndex: lastK });
    lastKOf.set(publisher, Math.max(lastK, k));
  }
  for (const [id, list] of seqsOf) if (list.length > 1) v.add('duplicate', { stream, replica, id, seqs: list });
  for (const [id, seq] of acks) {
    const stored = seqsOf.get(id);
    if (!stored) v.add('lost', { stream, replica, id, ackedSeq: seq });
    else if (!stored.includes(seq)) v.add('seq-mismatch', { stream, replica, id, ackedSeq: seq, storedSeqs: stored });
  }
}

function compareReplicas(v, stream, reads) {
  const ok = reads.filter((r) => r.read.ok);
  if (ok.length < 2) return;
  const [base, ...rest] = ok;
  for (const other of rest) {
    if (other.read.lastSeq !== base.read.lastSeq || other.read.firstSeq !== base.read.firstSeq) {
      v.add('replica-bounds-differ', { stream, replicas: [base.name, other.name], first: [base.read.firstSeq, other.read.firstSeq], last: [base.read.lastSeq, other.read.lastSeq] });
    }
    const seqs = new Set([...base.read.messages.keys(), ...other.read.messages.keys()]);
    let differing = 0;
    let example = null;
    for (const seq of seqs) {
      const a = base.read.messages.get(seq);
      const b = other.read.messages.get(seq);
      if (a !== b) {
        differing++;
        example ??= { seq, [base.name]: a ?? null, [other.name]: b ?? null };
      }
    }
    if (differing > 0) v.add('replica-divergence', { stream, replicas: [base.name, other.name], differingSeqs: differing, example });
  }
}

/**
 * @param streams [{ name, acks: Map<id,seq>, publisherViolations: [], replicas: [{name, read}], received: Map<id,seq>, consumerStates: [{name, state}] }]
 */
export function judge(streams) {
  const v = new Violations();
  const perStream = {};
  for (const s of streams) {
    for (const pv of s.publisherViolations) v.add(pv.type, pv);
    if (s.unavailable) v.add('stream-unavailable', { stream: s.name, reason: s.unavailable });
    for (const r of s.replicas) {
      if (!r.read.ok) v.add('replica-unverified', { stream: s.name, replica: r.name, reason: r.read.reason });
      else checkReplica(v, s.name, r.name, r.read, s.acks);
    }
    compareReplicas(v, s.name, s.replicas);
    // acked ids no readable replica holds: gone from the cluster, whatever the per-replica counts say
    const readable = s.replicas.filter((r) => r.read.ok);
    const held = new Set(readable.flatMap((r) => [...r.read.messages.values()]));
    const lostEverywhere = readable.length === 0 ? null : [...s.acks.keys()].filter((id) => !held.has(id)).length;
    let notDelivered = 0;
    for (const [id, seq] of s.acks) {
      if (!s.received.has(id)) {
        notDelivered++;
        v.add('not-delivered', { stream: s.name, id, ackedSeq: seq });
      }
    }
    const states = s.consumerStates.filter((c) => c.state.ok);
    for (const c of s.consumerStates) if (!c.state.ok) v.add('consumer-unverified', { stream: s.name, replica: c.name, reason: c.state.reason });
    const key = (st) => `${st.delivered}/${st.ackFloor}/${st.numAckPending}/${st.numPending}`;
    if (new Set(states.map((c) => key(c.state))).size > 1) {
      v.add('consumer-state-divergence', { stream: s.name, states: Object.fromEntries(states.map((c) => [c.name, c.state])) });
    }
    const topology = s.topology ? checkTopology(v, s) : undefined;
    perStream[s.name] = {
      ...(topology ? { topology } : {}),
      acked: s.acks.size,
      replicasRead: s.replicas.filter((r) => r.read.ok).map((r) => r.name),
      lastSeq: Object.fromEntries(s.replicas.filter((r) => r.read.ok).map((r) => [r.name, r.read.lastSeq])),
      lostEverywhere,
      received: s.received.size,
      notDelivered,
      consumerState: Object.fromEntries(s.consumerStates.map((c) => [c.name, c.state])),
    };
  }
  return { violations: v.toJSON(), perStream };
}
