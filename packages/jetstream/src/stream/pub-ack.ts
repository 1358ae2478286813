// PubAck bytes exactly as nats-server 2.9/2.10 writes them (note the literal spacing).
import type { ApiError } from '../api/api-error.js';

export class PubAckEncoder {
  private readonly prefix: string;
  private readonly streamJson: string;

  constructor(streamName: string, domain: string | undefined) {
    this.streamJson = JSON.stringify(streamName);
    this.prefix = domain ? `{"stream":${this.streamJson}, "domain":${JSON.stringify(domain)}, "seq":` : `{"stream":${this.streamJson}, "seq":`;
  }

  ack(seq: number): Buffer {
    return Buffer.from(`${this.prefix}${seq}}`);
  }

  duplicate(seq: number): Buffer {
    return Buffer.from(`${this.prefix}${seq},"duplicate": true}`);
  }

  error(err: ApiError): Buffer {
    return Buffer.from(`{"error":${JSON.stringify(err.toJSON())},"stream":${this.streamJson},"seq":0}`);
  }
}
