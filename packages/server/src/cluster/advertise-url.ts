// `client_advertise` as nats-server reads it: "host" or "host:port" (a missing port is the client port), with
// an optional nats:// scheme dropped; without it, the listen host (or this machine's address) and the port.
export function clientAdvertiseUrl(advertise: string | undefined, listenHost: string, clientPort: number): string {
  const given = advertise?.trim().replace(/^nats:\/\//i, '') ?? '';
  if (given === '') return `${listenHost}:${clientPort}`;
  return hasPort(given) ? given : `${given}:${clientPort}`;
}

/** "h:1234" or "[::1]:1234"; a bare IPv6 address has no port. */
export function hasPort(hostPort: string): boolean {
  if (hostPort.startsWith('[')) return /\]:\d+$/.test(hostPort);
  return /^[^:]+:\d+$/.test(hostPort);
}
