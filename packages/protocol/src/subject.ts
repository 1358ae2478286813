// NATS subject rules (reference §7). These run per PUB/SUB, so they walk char codes instead of
// using regexes or split(), which would allocate.

const DOT = 0x2e; // '.'
const STAR = 0x2a; // '*'
const GT = 0x3e; // '>'
const SPACE = 0x20;
const TAB = 0x09;
const CR = 0x0d;
const LF = 0x0a;

function isWhitespace(code: number): boolean {
  return code === SPACE || code === TAB || code === CR || code === LF;
}

/** Token-kind flags for `scanSubject`: which single-char wildcard tokens are acceptable. */
const ALLOW_NONE = 0;
const ALLOW_WILDCARDS = 1; // '*' anywhere, '>' as last token only
const ALLOW_ANY = 2; // wildcard tokens accepted anywhere and treated literally (non-pedantic publish)

function scanSubject(subject: string, mode: number): boolean {
  const len = subject.length;
  if (len === 0) return false;
  let tokenStart = 0;
  for (let i = 0; i <= len; i++) {
    const code = i === len ? DOT : subject.charCodeAt(i);
    if (code === DOT) {
      const tokenLen = i - tokenStart;
      if (tokenLen === 0) return false; // leading, trailing or doubled '.'
      if (tokenLen === 1 && mode !== ALLOW_ANY) {
        const c = subject.charCodeAt(tokenStart);
        if (c === STAR || c === GT) {
          if (mode === ALLOW_NONE) return false;
          if (c === GT && i !== len) return false; // '>' must be the last token
        }
      }
      tokenStart = i + 1;
    } else if (isWhitespace(code)) {
      return false;
    }
  }
  return true;
}

/** literal subject: non-empty tokens split by '.', no whitespace (space, tab, \r, \n), no wildcards */
export function isValidLiteralSubject(subject: string): boolean {
  return scanSubject(subject, ALLOW_NONE);
}

/** subscribe subject: like literal but a token may BE exactly '*' or '>' ; '>' only as last token */
export function isValidSubject(subject: string): boolean {
  return scanSubject(subject, ALLOW_WILDCARDS);
}

/** non-pedantic publish: any non-empty tokens without whitespace; wildcard tokens allowed and treated literally */
export function isValidPublishSubject(subject: string): boolean {
  return scanSubject(subject, ALLOW_ANY);
}

/** queue group name: non-empty, no whitespace */
export function isValidQueueName(queue: string): boolean {
  const len = queue.length;
  if (len === 0) return false;
  for (let i = 0; i < len; i++) {
    if (isWhitespace(queue.charCodeAt(i))) return false;
  }
  return true;
}

/** true if `subject` from `from` to its end consists of non-empty tokens */
function restHasNoEmptyToken(subject: string, from: number): boolean {
  const len = subject.length;
  if (from >= len) return false;
  let prevDot = true;
  for (let i = from; i < len; i++) {
    const isDot = subject.charCodeAt(i) === DOT;
    if (isDot && prevDot) return false;
    prevDot = isDot;
  }
  return !prevDot;
}

/**
 * true if `subject` (literal) matches `filter` (may contain wildcards).
 * Wildcard tokens inside `subject` are compared literally, so a published `foo.*` matches the filters
 * `foo.*`, `foo.>` and `>` but not `foo.bar` (non-pedantic nats-server behaviour).
 */
export function subjectMatchesFilter(subject: string, filter: string): boolean {
  const sLen = subject.length;
  const fLen = filter.length;
  if (sLen === 0 || fLen === 0) return false;
  let si = 0;
  let fi = 0;
  // Each pass consumes one token of both strings, so the loop runs at most fLen + 1 times.
  for (let guard = 0; guard <= fLen; guard++) {
    let fEnd = filter.indexOf('.', fi);
    if (fEnd < 0) fEnd = fLen;
    let sEnd = subject.indexOf('.', si);
    if (sEnd < 0) sEnd = sLen;
    const sTokenLen = sEnd - si;
    if (sTokenLen === 0) return false;
    const fTokenLen = fEnd - fi;
    if (fTokenLen === 0) return false;
    if (fTokenLen === 1) {
      const c = filter.charCodeAt(fi);
      if (c === GT) return fEnd === fLen && restHasNoEmptyToken(subject, si);
      if (c !== STAR && (sTokenLen !== 1 || subject.charCodeAt(si) !== c)) return false;
    } else {
      if (sTokenLen !== fTokenLen) return false;
      for (let k = 0; k < fTokenLen; k++) {
        if (subject.charCodeAt(si + k) !== filter.charCodeAt(fi + k)) return false;
      }
    }
    const fDone = fEnd === fLen;
    const sDone = sEnd === sLen;
    if (fDone || sDone) return fDone && sDone;
    fi = fEnd + 1;
    si = sEnd + 1;
  }
  return false;
}

/** true if the subject contains a '*' or '>' wildcard token */
export function subjectHasWildcard(subject: string): boolean {
  const len = subject.length;
  let tokenStart = 0;
  for (let i = 0; i <= len; i++) {
    if (i === len || subject.charCodeAt(i) === DOT) {
      if (i - tokenStart === 1) {
        const c = subject.charCodeAt(tokenStart);
        if (c === STAR || c === GT) return true;
      }
      tokenStart = i + 1;
    }
  }
  return false;
}
