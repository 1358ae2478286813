// Where a new consumer starts (deliver_policy, nats-server's selectStartingSeqNo): the first stream
// sequence to look at and, for last_per_subject, the sequences to deliver before normal order resumes.
import { msToBigNs, type MessageStore } from '@flotilla/store';
import type { ConsumerConfig } from './consumer-config.js';

export interface StartPosition {
  sseq: number;
  /** last_per_subject: ascending sequences of the newest message per matching subject. */
  lastPerSubject: number[];
}

/** Messages read per step while looking for a start time (timestamps follow sequences). */
const TIME_SCAN_BATCH = 1024;

export async function startPosition(store: MessageStore, cfg: ConsumerConfig, filters: readonly string[]): Promise<StartPosition> {
  const st = store.state();
  const first = st.messages > 0 ? st.first_seq : st.last_seq + 1;
  switch (cfg.deliver_policy) {
    case 'all':
      return { sseq: first, lastPerSubject: [] };
    case 'new':
      return { sseq: st.last_seq + 1, lastPerSubject: [] };
    case 'last': {
      // The last message matching the filter(s), or the stream's last.
      let last = 0;
      if (filters.length === 0) last = st.last_seq;
      else for (const f of filters) last = Math.max(last, store.filteredState(f, 0).last);
      return { sseq: last > 0 ? last : st.last_seq + 1, lastPerSubject: [] };
    }
    case 'by_start_sequence':
      return { sseq: Math.max(cfg.opt_start_seq ?? 1, 1), lastPerSubject: [] };
    case 'by_start_time':
      return { sseq: await firstSeqAtOrAfter(store, Date.parse(cfg.opt_start_time!)), lastPerSubject: [] };
    case 'last_per_subject': {
      const seqs: number[] = [];
      for (const f of filters) {
        for (const subject of store.subjectCounts(f).keys()) {
          const s = store.lastSeqForSubject(subject);
          if (s > 0) seqs.push(s);
        }
      }
      seqs.sort((a, b) => a - b);
      return { sseq: seqs.length > 0 ? seqs[0]! : st.last_seq + 1, lastPerSubject: seqs };
    }
  }
}

async function firstSeqAtOrAfter(store: MessageStore, ms: number): Promise<number> {
  const st = store.state();
  if (st.messages === 0) return st.last_seq + 1;
  const targetNs = msToBigNs(Math.floor(ms));
  if (st.first_ts >= targetNs) return st.first_seq;
  if (st.last_ts < targetNs) return st.last_seq + 1;
  let seq = st.first_seq;
  for (let guard = 0; guard < 1_000_000 && seq <= st.last_seq; guard++) {
    const batch = await store.readRange(seq, TIME_SCAN_BATCH);
    if (batch.length === 0) break;
    for (const m of batch) if (m.timestampNs >= targetNs) return m.seq;
    seq = batch[batch.length - 1]!.seq + 1;
  }
  return st.last_seq + 1;
}
