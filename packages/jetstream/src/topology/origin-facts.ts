// checkStreamCfg's rules that read the origin's own config when it is in this account's catalogue (never
// for `external` origins): a mirror's or target's max_msg_size must not be below the origin's (10030 /
// 10046), and a mirror inherits `mirror_direct` from the origin's `allow_direct`.
import { jsError } from '../api/js-error-table.js';
import { pedanticError } from '../stream/stream-pedantic.js';
import type { StreamConfig } from '../stream/stream-config-types.js';

/** The config of a stream of the catalogue, or undefined when there is none by that name. */
export type OriginLookup = (name: string) => Promise<Readonly<StreamConfig> | undefined>;

/** `pedantic`: a mirror whose `mirror_direct` differs from the origin's `allow_direct` is refused, not adjusted. */
export async function applyOriginFacts(cfg: StreamConfig, originOf: OriginLookup, pedantic = false): Promise<StreamConfig> {
  const m = cfg.mirror;
  if (m !== undefined && m.external === undefined) {
    const origin = await originOf(m.name);
    if (origin !== undefined) {
      if (cfg.max_msg_size > 0 && origin.max_msg_size > 0 && cfg.max_msg_size < origin.max_msg_size) throw jsError('JSMirrorMaxMessageSizeTooBigErr');
      if (pedantic && cfg.mirror_direct !== origin.allow_direct) throw pedanticError('origin stream has direct get set, mirror has it disabled');
      cfg = { ...cfg, mirror_direct: origin.allow_direct };
    }
  }
  for (const s of cfg.sources ?? []) {
    if (s.external !== undefined) continue;
    const origin = await originOf(s.name);
    if (origin !== undefined && cfg.max_msg_size > 0 && origin.max_msg_size > 0 && cfg.max_msg_size < origin.max_msg_size) {
      throw jsError('JSSourceMaxMessageSizeTooBigErr');
    }
  }
  return cfg;
}
