// What /proc tells about a server process: CPU time and resident memory (Linux; 0/NaN elsewhere).
import { readFileSync } from 'node:fs';

const CLK_TCK = 100; // Linux clock ticks per second in /proc/<pid>/stat

/** User + system CPU of the processes, in ms (0 for one that is gone). */
export function cpuMsOf(pids) {
  let ticks = 0;
  for (const pid of pids) {
    try {
      // fields after the parenthesised command name: state is the 3rd field, utime the 14th, stime the 15th
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      ticks += Number(f[11]) + Number(f[12]);
    } catch {
      // not on Linux, or exited
    }
  }
  return (ticks / CLK_TCK) * 1000;
}

/** Resident set size in MB (one decimal). */
export function rssMbOf(pid) {
  try {
    const kb = Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0);
    return Math.round(kb / 102.4) / 10;
  } catch {
    return NaN;
  }
}
