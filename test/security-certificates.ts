// Certificates for TLS tests, made with the openssl CLI in a temp dir: a CA, a server certificate for
// 127.0.0.1/localhost, client certificates signed by that CA, and one signed by an unrelated CA.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface CertPair {
  cert: string;
  key: string;
}

export interface TestCertificates {
  dir: string;
  caFile: string;
  server: CertPair;
  /** subject O=Flotilla/OU=Test/CN=alice, e-mail SAN alice@example.com */
  alice: CertPair;
  /** subject O=Flotilla/CN=bob, no SAN: maps by subject only */
  bob: CertPair;
  /** subject CN=carol, signed by the CA but named by no user */
  carol: CertPair;
  /** signed by another CA */
  rogue: CertPair;
}

function openssl(dir: string, args: string[]): void {
  execFileSync('openssl', args, { cwd: dir, stdio: 'pipe' });
}

function makeCa(dir: string, name: string): void {
  openssl(dir, ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-keyout', `${name}.key`, '-out', `${name}.pem`, '-days', '2', '-subj', `/CN=${name}`]);
}

function makeLeaf(dir: string, ca: string, name: string, subject: string, ext: string): CertPair {
  openssl(dir, ['req', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-keyout', `${name}.key`, '-out', `${name}.csr`, '-subj', subject]);
  writeFileSync(join(dir, `${name}.ext`), ext);
  openssl(dir, [
    'x509', '-req', '-in', `${name}.csr`, '-CA', `${ca}.pem`, '-CAkey', `${ca}.key`, '-CAcreateserial',
    '-out', `${name}.pem`, '-days', '2', '-extfile', `${name}.ext`,
  ]);
  return { cert: join(dir, `${name}.pem`), key: join(dir, `${name}.key`) };
}

export function makeTestCertificates(): TestCertificates {
  const dir = mkdtempSync(join(tmpdir(), 'flotilla-certs-'));
  makeCa(dir, 'ca');
  makeCa(dir, 'rogue-ca');
  const server = makeLeaf(dir, 'ca', 'server', '/CN=localhost', 'subjectAltName=DNS:localhost,IP:127.0.0.1\nextendedKeyUsage=serverAuth\n');
  const alice = makeLeaf(dir, 'ca', 'alice', '/O=Flotilla/OU=Test/CN=alice', 'subjectAltName=email:alice@example.com\nextendedKeyUsage=clientAuth\n');
  const bob = makeLeaf(dir, 'ca', 'bob', '/O=Flotilla/CN=bob', 'extendedKeyUsage=clientAuth\n');
  const carol = makeLeaf(dir, 'ca', 'carol', '/CN=carol', 'extendedKeyUsage=clientAuth\n');
  const rogue = makeLeaf(dir, 'rogue-ca', 'rogue', '/CN=rogue', 'subjectAltName=email:alice@example.com\nextendedKeyUsage=clientAuth\n');
  return { dir, caFile: join(dir, 'ca.pem'), server, alice, bob, carol, rogue };
}
