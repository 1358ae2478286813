// Certificates for cluster mutual-TLS tests, made with the openssl CLI in a temp dir: a cluster CA, one
// certificate per node (server and client use, for 127.0.0.1/localhost), and a node certificate signed by
// an unrelated CA.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface NodeCertificate {
  certFile: string;
  keyFile: string;
}

export interface ClusterCertificates {
  dir: string;
  caFile: string;
  /** signed by the cluster CA */
  node: (name: string) => NodeCertificate;
  /** signed by another CA; caFile is that CA */
  rogue: NodeCertificate & { caFile: string };
}

function openssl(dir: string, args: string[]): void {
  execFileSync('openssl', args, { cwd: dir, stdio: 'pipe' });
}

function makeCa(dir: string, name: string): void {
  openssl(dir, ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-keyout', `${name}.key`, '-out', `${name}.pem`, '-days', '2', '-subj', `/CN=${name}`]);
}

function makeNodeCert(dir: string, ca: string, name: string): NodeCertificate {
  openssl(dir, ['req', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-keyout', `${name}.key`, '-out', `${name}.csr`, '-subj', `/CN=${name}`]);
  // Each node is a TLS server (its listener) and a TLS client (its dials).
  writeFileSync(join(dir, `${name}.ext`), 'subjectAltName=DNS:localhost,IP:127.0.0.1\nextendedKeyUsage=serverAuth,clientAuth\n');
  openssl(dir, ['x509', '-req', '-in', `${name}.csr`, '-CA', `${ca}.pem`, '-CAkey', `${ca}.key`, '-CAcreateserial', '-out', `${name}.pem`, '-days', '2', '-extfile', `${name}.ext`]);
  return { certFile: join(dir, `${name}.pem`), keyFile: join(dir, `${name}.key`) };
}

export function makeClusterCertificates(): ClusterCertificates {
  const dir = mkdtempSync(join(tmpdir(), 'flotilla-cluster-certs-'));
  makeCa(dir, 'cluster-ca');
  makeCa(dir, 'rogue-ca');
  const made = new Map<string, NodeCertificate>();
  return {
    dir,
    caFile: join(dir, 'cluster-ca.pem'),
    node: (name) => {
      let c = made.get(name);
      if (c === undefined) made.set(name, (c = makeNodeCert(dir, 'cluster-ca', name)));
      return c;
    },
    rogue: { ...makeNodeCert(dir, 'rogue-ca', 'rogue'), caFile: join(dir, 'rogue-ca.pem') },
  };
}
