// The names a verified client certificate can map to a user by (tls verify_and_map), in nats-server's
// order: e-mail SANs, DNS SANs, then the subject as Go prints it (RFC 2253, e.g. "CN=alice,OU=Ops,O=Acme").
import type { X509Certificate } from 'node:crypto';

// Go's pkix.Name.String(): attributes in this fixed order (the reverse of its RDN sequence).
const GO_SUBJECT_ORDER = ['CN', 'SERIALNUMBER', 'OU', 'O', 'POSTALCODE', 'STREET', 'L', 'ST', 'C'];

export function certificateIdentities(cert: X509Certificate | undefined): string[] {
  if (cert === undefined) return [];
  const emails: string[] = [];
  const dnsNames: string[] = [];
  for (const part of (cert.subjectAltName ?? '').split(', ')) {
    if (part.startsWith('email:')) emails.push(part.slice(6));
    else if (part.startsWith('DNS:')) dnsNames.push(part.slice(4));
  }
  const names = [...emails, ...dnsNames];
  const attrs = cert.subject.split('\n').filter((line) => line !== '');
  const ordered: string[] = [];
  for (const key of GO_SUBJECT_ORDER) {
    for (const a of attrs) if (a.slice(0, a.indexOf('=')).toUpperCase() === key) ordered.push(a);
  }
  if (ordered.length > 0) names.push(ordered.join(','));
  // The certificate's own order, reversed, covers attributes Go's list does not name.
  const reversed = [...attrs].reverse().join(',');
  if (reversed !== '' && !names.includes(reversed)) names.push(reversed);
  return names;
}
