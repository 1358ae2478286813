// Control of the fault hook from tests and chaos runs, over core NATS: with FLOTILLA_FAULT_HOOK=1 each node
// answers requests on `$FLOTILLA.FAULT.<server name>` (a local-only subscription, never routed):
//   {"op":"partition","peers":["n2"]}   cut links to n2 and refuse it until heal
//   {"op":"drop","peer":"n2","rate":0.5} lose that share of routed and Raft frames to and from n2
//   {"op":"delay","peer":"n2","ms":200}  hold every batch to n2 that long
//   {"op":"heal"}                         clear every rule and redial at once
//   {"op":"status"}                       no change
// Each reply is {"ok":true,"server":…,"faults":{…},"peers":[…]} or {"ok":false,"error":…}.
import type { ClusterNode } from '@flotilla/cluster';
import type { MessageRouter } from '../message-router.js';
import { Subscription, type SubscriptionOwner } from '../subscription.js';

export const FAULT_HOOK_ENV = 'FLOTILLA_FAULT_HOOK';
export const FAULT_SUBJECT_PREFIX = '$FLOTILLA.FAULT.';

export function faultHookEnabled(env: NodeJS.ProcessEnv = process.env): boolean {
  return env[FAULT_HOOK_ENV] === '1' || env[FAULT_HOOK_ENV] === 'true';
}

export class FaultControl implements SubscriptionOwner {
  readonly cid = 0;
  private readonly sub: Subscription;

  constructor(
    private readonly router: MessageRouter,
    private readonly node: ClusterNode,
  ) {
    this.sub = new Subscription(this, `${FAULT_SUBJECT_PREFIX}${node.serverName}`, null, '$fault');
  }

  start(): void {
    this.router.subscribe(this.sub);
  }

  stop(): void {
    this.router.unsubscribe(this.sub);
  }

  deliverMessage(_sub: Subscription, _subject: string, reply: string | null, headerBytes: number, message: Buffer): void {
    const body = headerBytes > 0 ? message.subarray(headerBytes) : message;
    let answer: Record<string, unknown>;
    try {
      this.apply(JSON.parse(body.toString('utf8')) as Record<string, unknown>);
      answer = {
        ok: true,
        server: this.node.serverName,
        faults: this.node.faults.state(),
        peers: this.node.peers().map((p) => p.serverName).sort(),
      };
    } catch (err) {
      answer = { ok: false, error: (err as Error).message };
    }
    if (reply !== null) this.router.publish(reply, null, -1, Buffer.from(JSON.stringify(answer)), 0, true);
  }

  private apply(cmd: Record<string, unknown>): void {
    const faults = this.node.faults;
    switch (cmd['op']) {
      case 'partition': {
        const peers = cmd['peers'];
        if (!Array.isArray(peers) || !peers.every((p) => typeof p === 'string')) throw new Error('peers must be names');
        this.node.partition(peers as string[]);
        return;
      }
      case 'drop': {
        const rate = Number(cmd['rate']);
        if (typeof cmd['peer'] !== 'string' || !(rate >= 0 && rate <= 1)) throw new Error('drop needs peer and rate in [0,1]');
        faults.dropRate.set(cmd['peer'], rate);
        return;
      }
      case 'delay': {
        const ms = Number(cmd['ms']);
        if (typeof cmd['peer'] !== 'string' || !(ms >= 0 && ms <= 60_000)) throw new Error('delay needs peer and ms in [0,60000]');
        faults.delayMs.set(cmd['peer'], ms);
        return;
      }
      case 'heal':
        this.node.heal();
        return;
      case 'status':
        return;
      default:
        throw new Error(`unknown op ${String(cmd['op'])}`);
    }
  }
}
