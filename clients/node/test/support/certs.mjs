// Certificates for TLS tests, made with the machine's openssl in a fresh temp dir: a CA, a foreign CA, a
// node certificate for 127.0.0.1, client certificates of both CAs, and one that has expired.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

export function makeCerts() {
  const dir = mkdtempSync(path.join(tmpdir(), 'fencekeeper-certs-'));
  const file = (name) => path.join(dir, name);
  const openssl = (...args) => execFileSync('openssl', args, { cwd: dir, stdio: ['ignore', 'ignore', 'pipe'] });
  const ca = (name) => {
    openssl('req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-days', '2',
      '-subj', `/CN=${name}`, '-keyout', file(`${name}.key`), '-out', file(`${name}.crt`),
      '-addext', 'basicConstraints=critical,CA:TRUE', '-addext', 'keyUsage=critical,keyCertSign,cRLSign');
  };
  const request = (name, san) => {
    openssl('req', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-subj', `/CN=${name}`,
      '-keyout', file(`${name}.key`), '-out', file(`${name}.csr`), ...(san ? ['-addext', `subjectAltName=${san}`] : []));
  };
  const sign = (name, issuer) => {
    openssl('x509', '-req', '-in', file(`${name}.csr`), '-CA', file(`${issuer}.crt`), '-CAkey', file(`${issuer}.key`),
      '-CAcreateserial', '-days', '2', '-copy_extensions', 'copy', '-out', file(`${name}.crt`));
  };
  ca('ca');
  ca('foreign-ca');
  request('node', 'IP:127.0.0.1');
  sign('node', 'ca');
  request('other-host', 'DNS:elsewhere.example');
  sign('other-host', 'ca');
  request('client', undefined);
  sign('client', 'ca');
  request('foreign-client', undefined);
  sign('foreign-client', 'foreign-ca');
  // An expired certificate needs dates in the past, which only `openssl ca` sets.
  request('expired-client', undefined);
  writeFileSync(file('index.txt'), '');
  writeFileSync(file('serial'), '1000\n');
  writeFileSync(file('ca.cnf'), [
    '[ca]', 'default_ca = d', '[d]', `dir = ${dir}`, 'database = $dir/index.txt', 'new_certs_dir = $dir',
    'serial = $dir/serial', 'default_md = sha256', 'policy = p', 'unique_subject = no', '[p]', 'commonName = supplied', '',
  ].join('\n'));
  openssl('ca', '-batch', '-config', file('ca.cnf'), '-cert', file('ca.crt'), '-keyfile', file('ca.key'),
    '-in', file('expired-client.csr'), '-out', file('expired-client.crt'), '-notext',
    '-startdate', '20200101000000Z', '-enddate', '20200102000000Z');
  const pem = (name) => readFileSync(file(name), 'utf8');
  const pair = (name) => ({ cert: pem(`${name}.crt`), key: pem(`${name}.key`) });
  return {
    ca: pem('ca.crt'),
    foreignCa: pem('foreign-ca.crt'),
    node: pair('node'),
    otherHost: pair('other-host'),
    client: pair('client'),
    foreignClient: pair('foreign-client'),
    expiredClient: pair('expired-client'),
    remove: () => rmSync(dir, { recursive: true, force: true }),
  };
}
