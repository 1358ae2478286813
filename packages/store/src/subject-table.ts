/**
 * Interned subjects with their live count and first/last sequence (the per-subject index).
 * Ids start at 1 (0 marks a hole in SeqIndex) and are recycled when a subject's last message goes.
 */
export class SubjectTable {
  private readonly ids = new Map<string, number>();
  names: string[] = [''];
  byteLen: number[] = [0];
  /** UTF-8 bytes of each subject, encoded once. */
  bytes: Buffer[] = [Buffer.alloc(0)];
  count: number[] = [0];
  first: number[] = [0];
  last: number[] = [0];
  private readonly free: number[] = [];

  get size(): number {
    return this.ids.size;
  }

  idOf(subject: string): number {
    return this.ids.get(subject) ?? 0;
  }

  /** Id for `subject`, creating an empty entry if needed. */
  intern(subject: string): number {
    const found = this.ids.get(subject);
    if (found !== undefined) return found;
    const id = this.free.pop() ?? this.names.length;
    this.names[id] = subject;
    this.bytes[id] = Buffer.from(subject);
    this.byteLen[id] = this.bytes[id].length;
    this.count[id] = 0;
    this.first[id] = 0;
    this.last[id] = 0;
    this.ids.set(subject, id);
    return id;
  }

  release(id: number): void {
    this.ids.delete(this.names[id]);
    this.names[id] = '';
    this.free.push(id);
  }

  clear(): void {
    this.ids.clear();
    this.names = [''];
    this.byteLen = [0];
    this.bytes = [Buffer.alloc(0)];
    this.count = [0];
    this.first = [0];
    this.last = [0];
    this.free.length = 0;
  }

  *entries(): IterableIterator<[string, number]> {
    yield* this.ids.entries();
  }
}
