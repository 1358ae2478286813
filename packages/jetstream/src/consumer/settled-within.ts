// Waits for a promise to settle, but at most `ms` (its outcome is ignored). Used where waiting for earlier
// work keeps an order that matters, yet that work may hang on a Raft commit that never comes: the caller goes
// on after the bound instead of hanging with it.
/** true when `p` settled within `ms`, false when the bound ran out first. */
export function settledWithin(p: Promise<unknown>, ms: number): Promise<boolean> {
  return new Promise<boolean>((resolve) => {
    const timer = setTimeout(() => resolve(false), ms);
    const done = (): void => {
      clearTimeout(timer);
      resolve(true);
    };
    p.then(done, done);
  });
}
