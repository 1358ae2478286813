// Damage found in a FileStore's segment files at open: each damaged run of bytes is reported once, with the
// file, the offset and the sequences around it, to one process-wide observer (the server logs it) and to
// process-wide totals (the server's /metrics and /jsz show them). Unset, a report goes to stderr.

export interface StoreDamage {
  /** The segment file. */
  file: string;
  /** Offset of the first damaged byte in the file, and how many bytes are unusable. */
  offset: number;
  bytes: number;
  /** The last sound sequence before the damage in its frame (0: none). */
  afterSeq: number;
  /** The first sound sequence after it in its frame; null: none (lost up to the frame's end). */
  beforeSeq: number | null;
}

export type DamageObserver = (damage: StoreDamage) => void;

let observer: DamageObserver | null = null;
const totals = { regions: 0, bytes: 0 };

/** Installs (or with null removes) the observer; returns the one it replaced. */
export function setDamageObserver(next: DamageObserver | null): DamageObserver | null {
  const previous = observer;
  observer = next;
  return previous;
}

export function reportDamage(damage: StoreDamage): void {
  totals.regions++;
  totals.bytes += damage.bytes;
  if (observer !== null) observer(damage);
  else process.stderr.write(`flotilla store: damaged data lost: ${JSON.stringify(damage)}\n`);
}

/** Damaged runs found (and bytes lost) since the process started. */
export function damageTotals(): { regions: number; bytes: number } {
  return { ...totals };
}
