// One status line while the run goes on: rewritten in place on a terminal, a plain line every few seconds
// otherwise (CI logs).
export function startProgress({ quiet, render, intervalMs }) {
  if (quiet) return { stop() {}, log: (text) => process.stderr.write(`${text}\n`) };
  const tty = process.stderr.isTTY;
  let shown = false;
  const timer = setInterval(() => {
    const text = render();
    if (tty) process.stderr.write(`\r\x1b[K${text}`);
    else process.stderr.write(`${text}\n`);
    shown = true;
  }, tty ? 1_000 : intervalMs ?? 5_000);
  return {
    log(text) {
      // keep log lines from being glued to the status line
      process.stderr.write(tty && shown ? `\r\x1b[K${text}\n` : `${text}\n`);
    },
    stop() {
      clearInterval(timer);
      if (tty && shown) process.stderr.write('\r\x1b[K');
    },
  };
}
