// One gRPC bidirectional stream to one peer, from either end: the hello exchange, and an outbound queue
// that is written as one Batch (or a few, when large) per event-loop turn.
import type { Frame, HelloFrame, RefuseFrame } from './wire.js';

/** What a link needs from the gRPC call under it (client or server side). */
export interface LinkStream {
  write(frames: Frame[]): boolean;
  on(event: 'data', fn: (frames: Frame[]) => void): unknown;
  on(event: 'drain', fn: () => void): unknown;
  on(event: 'error', fn: (err: Error) => void): unknown;
  on(event: 'end' | 'close', fn: () => void): unknown;
  /** Ends the call gracefully, then tears it down. */
  close(): void;
}

export interface LinkOwner {
  onFrames(link: PeerLink, frames: Frame[]): void;
  onLinkClosed(link: PeerLink): void;
  /** Extra delay for batches to this peer (fault hook), 0 normally. */
  delayFor(link: PeerLink): number;
}

export type LinkState = 'handshake' | 'active' | 'closed';

/** Upper bound of one Batch, so the receiver is never asked for one huge gRPC message. */
const MAX_BATCH_BYTES = 1024 * 1024;
const FRAME_OVERHEAD_BYTES = 48;

let nextLinkId = 1;

export class PeerLink {
  readonly id = nextLinkId++;
  state: LinkState = 'handshake';
  /** The peer's identity, once its Hello has arrived. */
  peer: HelloFrame | null = null;
  closeReason = '';
  /** true once the hello exchange succeeded */
  everActive = false;
  /** Set when the peer refused this link. */
  refusedWith: RefuseFrame | null = null;
  /** This end's Hello nonce: the peer's Auth proof must cover it. */
  nonce: Uint8Array = new Uint8Array(0);
  /** The cluster secret this link is authenticated with ('' = none). */
  secret = '';
  /** The peer's Hello passed the identity checks; its Auth proof is awaited. */
  awaitingAuth = false;
  lastReceivedMs = Date.now();
  lastSentMs = Date.now();
  readonly openedMs = Date.now();
  framesSent = 0;
  framesReceived = 0;
  batchesSent = 0;
  /** Frame bytes handed to / received from the stream (estimated per frame, before gRPC framing). */
  bytesSent = 0;
  bytesReceived = 0;
  private queue: Frame[] = [];
  private queuedBytes = 0;
  private flushScheduled = false;
  private blocked = false;

  constructor(
    private readonly stream: LinkStream,
    /** true when this node dialed */
    readonly outbound: boolean,
    private readonly owner: LinkOwner,
    /** bound of frames waiting to be written; past it the peer is too slow and the link is dropped */
    private readonly maxPendingBytes: number,
    /** the route URL dialed, for outbound links */
    readonly dialedUrl = '',
  ) {
    stream.on('data', (frames) => {
      this.lastReceivedMs = Date.now();
      this.framesReceived += frames.length;
      for (let i = 0; i < frames.length; i++) this.bytesReceived += estimateBytes(frames[i]!);
      if (this.state === 'closed') return;
      try {
        this.owner.onFrames(this, frames);
      } catch (err) {
        // A bug in handling one peer's frames must not take the node down: drop the link (it resyncs).
        this.close(`frame handling failed: ${(err as Error).stack ?? String(err)}`);
      }
    });
    stream.on('drain', () => {
      this.blocked = false;
      if (this.queue.length > 0) this.scheduleFlush();
    });
    stream.on('error', (err) => this.close(`stream error: ${err.message}`));
    stream.on('end', () => this.close('peer ended the stream'));
    stream.on('close', () => this.close('stream closed'));
  }

  get peerName(): string {
    return this.peer?.serverName ?? '';
  }

  get pendingBytes(): number {
    return this.queuedBytes;
  }

  /** Queues a frame for the end-of-turn batch. */
  send(frame: Frame): void {
    if (this.state === 'closed') return;
    this.queue.push(frame);
    this.queuedBytes += estimateBytes(frame);
    if (this.queuedBytes > this.maxPendingBytes) {
      this.close(`slow peer: more than ${this.maxPendingBytes} bytes pending`);
      return;
    }
    this.scheduleFlush();
  }

  /** Sends a Refuse, then closes once it is written. */
  refuse(refusal: RefuseFrame): void {
    if (this.state === 'closed') return;
    this.queue.push({ refuse: refusal });
    this.flush();
    this.close(`refused: ${refusal.code}`);
  }

  close(reason: string): void {
    if (this.state === 'closed') return;
    this.state = 'closed';
    this.closeReason = reason;
    this.queue = [];
    this.queuedBytes = 0;
    try {
      this.stream.close();
    } catch {
      // already torn down
    }
    this.owner.onLinkClosed(this);
  }

  private scheduleFlush(): void {
    if (this.flushScheduled || this.blocked) return;
    this.flushScheduled = true;
    // After every socket read of this turn, so everything those reads produced travels together.
    setImmediate(this.flushNow);
  }

  private readonly flushNow = (): void => {
    this.flushScheduled = false;
    this.flush();
  };

  private flush(): void {
    if (this.state === 'closed' || this.queue.length === 0) return;
    const delayMs = this.owner.delayFor(this);
    const queue = this.queue;
    this.queue = [];
    this.bytesSent += this.queuedBytes;
    this.queuedBytes = 0;
    // Split into batches of at most MAX_BATCH_BYTES (estimated); a single larger frame goes alone.
    let start = 0;
    let bytes = 0;
    for (let i = 0; i < queue.length; i++) {
      const size = estimateBytes(queue[i]!);
      if (i > start && bytes + size > MAX_BATCH_BYTES) {
        this.writeBatch(queue.slice(start, i), delayMs);
        start = i;
        bytes = 0;
      }
      bytes += size;
    }
    this.writeBatch(start === 0 ? queue : queue.slice(start), delayMs);
  }

  private writeBatch(frames: Frame[], delayMs: number): void {
    if (delayMs > 0) {
      // Timers of equal duration fire in order, so a constant delay keeps batches in order.
      setTimeout(() => this.writeNow(frames), delayMs).unref();
      return;
    }
    this.writeNow(frames);
  }

  private writeNow(frames: Frame[]): void {
    if (this.state === 'closed') return;
    this.framesSent += frames.length;
    this.batchesSent++;
    this.lastSentMs = Date.now();
    try {
      if (!this.stream.write(frames)) this.blocked = true;
    } catch (err) {
      this.close(`write failed: ${(err as Error).message}`);
    }
  }
}

function estimateBytes(frame: Frame): number {
  if ('msg' in frame) return frame.msg.message.length + frame.msg.subject.length + frame.msg.reply.length + FRAME_OVERHEAD_BYTES;
  if ('raft' in frame) {
    let n = frame.raft.data.length + FRAME_OVERHEAD_BYTES * 2;
    for (const e of frame.raft.entries) n += e.data.length + 16;
    return n;
  }
  if ('interest' in frame) return frame.interest.entries.length * 64 + FRAME_OVERHEAD_BYTES;
  return FRAME_OVERHEAD_BYTES * 4;
}
