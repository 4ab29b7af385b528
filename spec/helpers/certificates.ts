import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** A CA and a server certificate for 127.0.0.1 / localhost, made with `openssl` in a fresh folder. */
export interface TestCertificates {
  readonly dir: string;
  /** The CA's certificate (PEM file), the one clients trust. */
  readonly caFile: string;
  readonly ca: Buffer;
  readonly certFile: string;
  readonly keyFile: string;
  /** Deletes the folder. */
  remove(): void;
}

/** Makes a throwaway CA and a server certificate it signed (RSA 2048, one day). */
export function makeCertificates(): TestCertificates {
  const dir = mkdtempSync(join(tmpdir(), 'ioredisson-tls-'));
  const path = (file: string) => join(dir, file);
  const openssl = (...args: string[]) => execFileSync('openssl', args, { stdio: 'pipe' });
  openssl(
    'req',
    '-x509',
    '-newkey',
    'rsa:2048',
    '-nodes',
    '-days',
    '1',
    '-subj',
    '/CN=ioredisson test CA',
    '-keyout',
    path('ca.key'),
    '-out',
    path('ca.crt'),
  );
  openssl(
    'req',
    '-newkey',
    'rsa:2048',
    '-nodes',
    '-subj',
    '/CN=localhost',
    '-keyout',
    path('server.key'),
    '-out',
    path('server.csr'),
  );
  writeFileSync(path('server.ext'), 'subjectAltName=IP:127.0.0.1,DNS:localhost\n');
  openssl(
    'x509',
    '-req',
    '-in',
    path('server.csr'),
    '-CA',
    path('ca.crt'),
    '-CAkey',
    path('ca.key'),
    '-CAcreateserial',
    '-days',
    '1',
    '-extfile',
    path('server.ext'),
    '-out',
    path('server.crt'),
  );
  return {
    dir,
    caFile: path('ca.crt'),
    ca: readFileSync(path('ca.crt')),
    certFile: path('server.crt'),
    keyFile: path('server.key'),
    remove: () => rmSync(dir, { recursive: true, force: true }),
  };
}

/** The `redis-server` arguments that serve TLS only (no plain port), clients without certificates. */
export function tlsServerArgs(certificates: TestCertificates, port: number): string[] {
  return [
    '--port',
    '0',
    '--tls-port',
    String(port),
    '--tls-cert-file',
    certificates.certFile,
    '--tls-key-file',
    certificates.keyFile,
    '--tls-ca-cert-file',
    certificates.caFile,
    '--tls-auth-clients',
    'no',
  ];
}

/** What a client needs to trust the test CA (ioredis `tls` options). */
export function trusting(certificates: TestCertificates): { ca: Buffer } {
  return { ca: certificates.ca };
}
