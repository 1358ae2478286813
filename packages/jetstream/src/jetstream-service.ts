// JetStream on this node: owns the streams, serves `$JS.API.>`, and persists the catalogue under storeDir.
// (Skeleton by the lead; the streams engineer owns and grows this file.)
import type { MessageBus, BusMessage, JetStreamLogger } from './message-bus.js';

export interface JetStreamServiceOptions {
  storeDir: string;
  /** -1 = unlimited */
  maxMemoryStoreBytes: number;
  /** -1 = unlimited */
  maxFileStoreBytes: number;
  domain?: string;
  /** Server's name and id for advisories and info responses. */
  serverName: string;
  serverId: string;
}

export class JetStreamService {
  private unsubscribeApi: (() => void) | null = null;

  constructor(
    readonly bus: MessageBus,
    readonly options: JetStreamServiceOptions,
    readonly log: JetStreamLogger,
  ) {}

  async start(): Promise<void> {
    this.unsubscribeApi = this.bus.subscribe('$JS.API.>', (msg) => this.onApiRequest(msg));
  }

  async stop(): Promise<void> {
    this.unsubscribeApi?.();
    this.unsubscribeApi = null;
  }

  private onApiRequest(_msg: BusMessage): void {
    // Unknown API subjects get no reply at all, as nats-server does.
  }
}
