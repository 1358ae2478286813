// The text of an unexpected error (a failed mkdir, a store fault) as an API caller may see it: the reason,
// never a file path — a client has no business knowing the server's directory layout.

/** `/x/y…` and `C:\x…` at the start of a word or quote: absolute paths as Node error messages quote them. */
const ABSOLUTE_PATH = /(?<=^|[\s'"(])(?:[A-Za-z]:\\|\/)[^\s'",)]*/g;

export function publicErrorText(err: unknown): string {
  if (!(err instanceof Error)) return redactPaths(String(err));
  const sys = err as NodeJS.ErrnoException;
  if (typeof sys.code === 'string' && typeof sys.syscall === 'string') {
    // "ENOTDIR: not a directory, mkdir '/store/streams/X'": the code and its description.
    const m = /^([A-Z0-9_]+): ([^,]*)/.exec(sys.message);
    return m !== null ? `${m[1]}: ${m[2]}` : sys.code;
  }
  return redactPaths(err.message);
}

function redactPaths(text: string): string {
  return text.replace(ABSOLUTE_PATH, '<path>');
}
