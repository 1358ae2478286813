// The StreamInfo of a stream open on this node, as STREAM.INFO answers it: its state, consumer count, and in
// a cluster its replica's `cluster` block.
import type { Stream } from '../stream/stream.js';
import { streamInfo, streamState, type StateOptions, type StreamInfoJson } from './stream-info.js';

/** The `cluster` block of the replica serving a stream on this node (none on a single node). */
export interface ClusterBlocks {
  clusterBlockOf(stream: string): object | undefined;
  /** StreamInfo's `alternates`: the stream and its mirrors in the cluster (none when it has no mirror). */
  alternatesOf?(stream: string): object[] | undefined;
}

export interface ConsumerCountSource {
  consumerCount(stream: string): number;
}

/** STREAM.INFO's body: StreamInfo with, in a cluster, the replica's `cluster` block. */
export type OpenStreamInfoJson = StreamInfoJson & { cluster?: object; mirror?: object; sources?: object[]; alternates?: object[]; ts?: string };

export class OpenStreamInfo {
  constructor(
    private readonly consumers: ConsumerCountSource,
    private readonly domain: string | undefined,
    private readonly blocks: ClusterBlocks | null,
  ) {}

  /** `state` options beyond the consumer count: STREAM.INFO's subjects and deleted details. */
  of(stream: Stream, state: Omit<StateOptions, 'consumerCount'> = {}): OpenStreamInfoJson {
    const consumerCount = this.consumers.consumerCount(stream.name);
    const info = streamInfo(stream, streamState(stream, { ...state, consumerCount }), this.domain);
    const cluster = this.blocks?.clusterBlockOf(stream.name);
    const out: OpenStreamInfoJson = cluster === undefined ? info : { ...info, cluster };
    // StreamInfo's `mirror` / `sources` (StreamSourceInfo) follow `cluster`, as nats-server orders them.
    const mirror = stream.topology.mirrorInfo();
    if (mirror !== undefined) out.mirror = mirror;
    const sources = stream.topology.sourcesInfo();
    if (sources !== undefined) out.sources = sources;
    const alternates = this.blocks?.alternatesOf?.(stream.name);
    if (alternates !== undefined) out.alternates = alternates;
    // StreamInfo.TimeStamp (2.10+): when the info was taken, last as nats-server writes it.
    out.ts = new Date().toISOString();
    return out;
  }
}
