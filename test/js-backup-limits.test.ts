// STREAM.RESTORE against an account's storage limit: the archive's bytes are counted as they arrive and a
// restore that would take the account over `max_file` fails with 10047 (nats-server's checkAllLimits error
// itself, not 10062), leaving no stream. nats-server 2.14's check; 2.9.10 restores without it (skipped there).
import { describe, it, expect } from 'vitest';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect } from 'nats';
import { useConfServers } from './helpers/conf-servers.js';
import { restore, snapshot } from './helpers/js-backup-client.js';

const enc = new TextEncoder();
const servers = useConfServers('backup-limits');

describe.skipIf(process.env['E2E_SERVER'] === 'nats-server')('a restore over the account storage limit', () => {
  it('fails with 10047 and leaves no stream', async () => {
    const big = await servers.serverWith(`port: -1\njetstream { store_dir: "${mkdtempSync(join(tmpdir(), 'flotilla-backup-big-'))}" }`);
    const small = await servers.serverWith(`port: -1
jetstream { store_dir: "${mkdtempSync(join(tmpdir(), 'flotilla-backup-small-'))}" }
accounts { A: { jetstream: { max_file: 20000 }, users: [ { user: a, password: a } ] } }`);
    const src = await connect({ servers: big.url });
    const dst = await connect({ servers: small.url, user: 'a', pass: 'a' });
    servers.conns.push(src, dst);
    const jsm = await src.jetstreamManager();
    await jsm.streams.add({ name: 'L', subjects: ['l.>'] });
    const js = src.jetstream();
    for (let i = 0; i < 100; i++) await js.publish('l.x', enc.encode('x'.repeat(1000)));
    const snap = await snapshot(src, 'L', { chunk_size: 4096 });
    const { start, result } = await restore(dst, 'L', { config: snap.response.config, state: snap.response.state }, snap.chunks);
    expect(start.error).toBeUndefined();
    expect(result.type).toBe('io.nats.jetstream.api.v1.stream_create_response');
    expect(result.error).toEqual({ code: 500, err_code: 10047, description: 'insufficient storage resources available' });
    await new Promise((r) => setTimeout(r, 300));
    const names = (await (await dst.jetstreamManager()).streams.names().next()) ?? [];
    expect(names).not.toContain('L');
  }, 30_000);
});
