// CMS SignedData verification with node:crypto: signatures (ECDSA, RSA PKCS#1 v1.5, RSASSA-PSS;
// detached and encapsulated; signed attributes or none), signer lookup, certificate paths to trust
// anchors, and garbage of every kind refused with a CmsError rather than a crash.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { Asn1Error, type Certificate, CmsError, type CmsFailure, decode, parseCertificate, validatePath, verifySignedData } from '#lib/packages/cms.ts';
import { bool, type Identity, makeIdentity, octets, oid, seq, signCms, tlv } from '../support/pki.ts';

const CONTENT = Buffer.from('metadata:\nvnf_product_name: Sample VNF\n\nSource: Definitions/vnfd.yaml\nAlgorithm: SHA-256\nHash: 00\n');
const DAY = 86_400_000;

const cert = (identity: Identity): Certificate => parseCertificate(identity.der);

function assertFails(run: () => unknown, failure: CmsFailure, message?: RegExp): CmsError {
  let caught: unknown;
  try {
    run();
  } catch (error) {
    caught = error;
  }
  assert.ok(caught instanceof CmsError, `expected a CmsError, got ${String(caught)}`);
  assert.equal(caught.failure, failure, caught.message);
  if (message) assert.match(caught.message, message);
  return caught;
}

const root = makeIdentity('Example Root CA');
const signer = makeIdentity('Example VNF Signer', { issuer: root, keyUsage: ['digitalSignature'] });
const otherRoot = makeIdentity('Someone Else CA');

describe('verifySignedData: signatures', () => {
  it('verifies a detached signature with signed attributes and returns the signer', () => {
    const [verified, ...more] = verifySignedData(signCms(CONTENT, signer), { contents: [CONTENT], anchors: [cert(root)] });
    assert.equal(more.length, 0);
    assert.equal(verified?.subjectName, 'CN=Example VNF Signer,O=Example');
  });

  it('verifies whichever of several contents was signed', () => {
    const variants = [Buffer.concat([CONTENT, Buffer.from('\n')]), CONTENT.subarray(0, -1), CONTENT];
    assert.equal(verifySignedData(signCms(CONTENT, signer), { contents: variants, anchors: [cert(root)] }).length, 1);
  });

  it('refuses tampered content', () => {
    const tampered = Buffer.from(CONTENT.toString().replace('Sample', 'Simple'));
    assertFails(() => verifySignedData(signCms(CONTENT, signer), { contents: [tampered] }), 'mismatch', /message-digest attribute does not match/);
  });

  it('refuses a signature whose message-digest attribute is not the digest of the content', () => {
    const der = signCms(CONTENT, signer, { messageDigest: Buffer.alloc(32, 7) });
    const error = assertFails(() => verifySignedData(der, { contents: [CONTENT] }), 'mismatch');
    assert.match(error.details.problem ?? '', /message-digest/);
  });

  it('refuses a content-type attribute other than data', () => {
    const der = signCms(CONTENT, signer, { contentType: '1.2.840.113549.1.7.2' });
    assertFails(() => verifySignedData(der, { contents: [CONTENT] }), 'mismatch', /content-type attribute is 1\.2\.840\.113549\.1\.7\.2, not data/);
  });

  it('refuses signed attributes that the signature does not cover', () => {
    // A signature by another key of the same name: the attributes are right, the signature is not.
    const impostor = { ...signer, privateKey: makeIdentity('Impostor').privateKey };
    const error = assertFails(() => verifySignedData(signCms(CONTENT, impostor), { contents: [CONTENT] }), 'mismatch');
    assert.equal(error.details.problem, undefined, 'no detail: the signature just does not verify');
  });

  it('verifies a signature without signed attributes over the content itself, and refuses it over other content', () => {
    const der = signCms(CONTENT, signer, { signedAttributes: false });
    assert.equal(verifySignedData(der, { contents: [CONTENT], anchors: [cert(root)] }).length, 1);
    assertFails(() => verifySignedData(der, { contents: [Buffer.from('other')] }), 'mismatch');
  });

  for (const digest of ['sha1', 'sha256', 'sha384', 'sha512'] as const) {
    it(`accepts the ${digest} digest algorithm`, () => {
      assert.equal(verifySignedData(signCms(CONTENT, signer, { digest }), { contents: [CONTENT] }).length, 1);
    });
  }

  it('refuses a digest algorithm it does not support (SHA-224)', () => {
    // SHA-224 with signed attributes made as for SHA-256, so that only the algorithm differs.
    const der = signCms(CONTENT, signer);
    const sha224 = oid('2.16.840.1.101.3.4.2.4');
    const patched = Buffer.from(der.toString('hex').replaceAll(oid('2.16.840.1.101.3.4.2.1').toString('hex'), sha224.toString('hex')), 'hex');
    assertFails(() => verifySignedData(patched, { contents: [CONTENT] }), 'mismatch', /unsupported digest algorithm 2\.16\.840\.1\.101\.3\.4\.2\.4/);
  });

  it('verifies ECDSA P-384, RSA PKCS#1 v1.5 (sha256WithRSAEncryption and rsaEncryption) and RSASSA-PSS', () => {
    const ecRoot = makeIdentity('EC Root', { key: 'ec-p384' });
    const ec = makeIdentity('EC Signer', { issuer: ecRoot, key: 'ec-p384' });
    assert.equal(verifySignedData(signCms(CONTENT, ec, { digest: 'sha384' }), { contents: [CONTENT], anchors: [cert(ecRoot)] }).length, 1);
    const rsaRoot = makeIdentity('RSA Root', { key: 'rsa' });
    const rsa = makeIdentity('RSA Signer', { issuer: rsaRoot, key: 'rsa' });
    for (const signatureAlgorithm of ['default', 'rsaEncryption', 'rsa-pss'] as const) {
      const der = signCms(CONTENT, rsa, { signatureAlgorithm });
      assert.equal(verifySignedData(der, { contents: [CONTENT], anchors: [cert(rsaRoot)] })[0]?.subjectName, 'CN=RSA Signer,O=Example', signatureAlgorithm);
      const tampered = Buffer.from(der);
      tampered[tampered.length - 5]! ^= 1; // inside the signature value
      assertFails(() => verifySignedData(tampered, { contents: [CONTENT] }), 'mismatch');
    }
    // An RSA signature algorithm with an EC key is refused, not tried.
    const der = signCms(CONTENT, signer, { signatureAlgorithm: 'rsaEncryption', signedAttributes: false });
    assertFails(() => verifySignedData(der, { contents: [CONTENT] }), 'mismatch');
  });

  it('verifies an encapsulated content equal to one of the contents, and refuses other encapsulated content', () => {
    const der = signCms(CONTENT, signer, { attached: true });
    assert.equal(verifySignedData(der, { contents: [Buffer.from('x'), CONTENT], anchors: [cert(root)] }).length, 1);
    assertFails(() => verifySignedData(der, { contents: [Buffer.from('other')] }), 'other-content');
  });

  it('refuses content that is not id-data', () => {
    const error = assertFails(
      () => verifySignedData(signCms(CONTENT, signer, { eContentType: '1.2.840.113549.1.9.16.1.4' }), { contents: [CONTENT] }),
      'not-data',
    );
    assert.equal(error.details.contentType, '1.2.840.113549.1.9.16.1.4');
  });
});

describe('verifySignedData: the signer certificate', () => {
  it('finds it by subject key identifier', () => {
    assert.equal(verifySignedData(signCms(CONTENT, signer, { sid: 'subjectKeyIdentifier' }), { contents: [CONTENT], anchors: [cert(root)] }).length, 1);
  });

  it('finds it among the certificates given beside the signature', () => {
    const der = signCms(CONTENT, signer, { certificates: [] });
    assert.equal(verifySignedData(der, { contents: [CONTENT], certificates: [cert(signer)], anchors: [cert(root)] }).length, 1);
  });

  it('refuses a signature whose signer certificate is nowhere', () => {
    const der = signCms(CONTENT, signer, { certificates: [] });
    assertFails(() => verifySignedData(der, { contents: [CONTENT] }), 'signer-missing');
    // A certificate of another key with the signer's name is not the signer's.
    const sameName = makeIdentity('Example VNF Signer', { issuer: root });
    assertFails(() => verifySignedData(signCms(CONTENT, signer, { certificates: [sameName] }), { contents: [CONTENT] }), 'signer-missing');
    assertFails(
      () => verifySignedData(signCms(CONTENT, signer, { certificates: [sameName], sid: 'subjectKeyIdentifier' }), { contents: [CONTENT] }),
      'signer-missing',
    );
  });
});

describe('verifySignedData: certificate paths', () => {
  it('refuses a signer that does not chain to a trust anchor, and a self-signed signer that is not one', () => {
    const error = assertFails(() => verifySignedData(signCms(CONTENT, signer), { contents: [CONTENT], anchors: [cert(otherRoot)] }), 'untrusted');
    assert.equal(error.details.signer, 'CN=Example VNF Signer,O=Example');
    assertFails(() => verifySignedData(signCms(CONTENT, otherRoot), { contents: [CONTENT], anchors: [cert(root)] }), 'untrusted', /no path to a trust anchor/);
  });

  it('accepts a signer that is itself a trust anchor (a CA certificate)', () => {
    assert.equal(verifySignedData(signCms(CONTENT, root), { contents: [CONTENT], anchors: [cert(root)] }).length, 1);
  });

  it('verifies without trust anchors but does not validate the signer then', () => {
    const expired = makeIdentity('Expired Signer', { issuer: otherRoot, notAfter: new Date(Date.now() - DAY) });
    assert.equal(verifySignedData(signCms(CONTENT, expired), { contents: [CONTENT] }).length, 1);
  });

  it('refuses an expired or not yet valid signer, intermediate or trust anchor', () => {
    const expired = makeIdentity('Expired Signer', { issuer: root, notBefore: new Date(Date.now() - 30 * DAY), notAfter: new Date(Date.now() - DAY) });
    assertFails(
      () => verifySignedData(signCms(CONTENT, expired), { contents: [CONTENT], anchors: [cert(root)] }),
      'untrusted',
      /"CN=Expired Signer,O=Example" expired on/,
    );
    const future = makeIdentity('Future Signer', { issuer: root, notBefore: new Date(Date.now() + DAY) });
    assertFails(() => verifySignedData(signCms(CONTENT, future), { contents: [CONTENT], anchors: [cert(root)] }), 'untrusted', /is not valid before/);
    const oldIntermediate = makeIdentity('Old Intermediate', { issuer: root, ca: true, notAfter: new Date(Date.now() - DAY) });
    const leaf = makeIdentity('Leaf', { issuer: oldIntermediate });
    assertFails(
      () => verifySignedData(signCms(CONTENT, leaf, { certificates: [leaf, oldIntermediate] }), { contents: [CONTENT], anchors: [cert(root)] }),
      'untrusted',
      /the intermediate certificate "CN=Old Intermediate,O=Example" expired/,
    );
    const oldRoot = makeIdentity('Old Root', { notAfter: new Date(Date.now() - DAY) });
    const child = makeIdentity('Child', { issuer: oldRoot });
    assertFails(() => verifySignedData(signCms(CONTENT, child), { contents: [CONTENT], anchors: [cert(oldRoot)] }), 'untrusted', /the trust anchor .* expired/);
    // The clock the path is checked at can be given.
    const longRoot = makeIdentity('Long Root', { notBefore: new Date(Date.now() - 60 * DAY) });
    const lapsed = makeIdentity('Lapsed Signer', { issuer: longRoot, notBefore: new Date(Date.now() - 30 * DAY), notAfter: new Date(Date.now() - DAY) });
    assert.throws(() => validatePath(cert(lapsed), [], [cert(longRoot)]), /expired on/);
    assert.equal(validatePath(cert(lapsed), [], [cert(longRoot)], new Date(Date.now() - 2 * DAY)).length, 2);
  });

  it('follows intermediates from the SignedData and from beside it, in any order', () => {
    const intermediate = makeIdentity('Example Intermediate CA', { issuer: root, ca: true, keyUsage: ['keyCertSign', 'cRLSign'] });
    const second = makeIdentity('Example Issuing CA', { issuer: intermediate, ca: true });
    const leaf = makeIdentity('Deep Signer', { issuer: second });
    const der = signCms(CONTENT, leaf, { certificates: [intermediate, leaf] });
    // Without the issuing CA there is no path; with it (beside the signature) there is.
    assertFails(() => verifySignedData(der, { contents: [CONTENT], anchors: [cert(root)] }), 'untrusted');
    const [signed] = verifySignedData(der, { contents: [CONTENT], certificates: [cert(second)], anchors: [cert(root)] });
    assert.equal(signed?.subjectName, 'CN=Deep Signer,O=Example');
    assert.deepEqual(
      validatePath(cert(leaf), [cert(intermediate), cert(second)], [cert(root)]).map((certificate) => certificate.subjectName),
      ['CN=Deep Signer,O=Example', 'CN=Example Issuing CA,O=Example', 'CN=Example Intermediate CA,O=Example', 'CN=Example Root CA,O=Example'],
    );
  });

  it('refuses an intermediate that is not a CA, may not sign certificates, or is past its path length', () => {
    const notCa = makeIdentity('Not A CA', { issuer: root, ca: false });
    const underNotCa = makeIdentity('Under Not A CA', { issuer: notCa });
    assertFails(
      () => verifySignedData(signCms(CONTENT, underNotCa, { certificates: [underNotCa, notCa] }), { contents: [CONTENT], anchors: [cert(root)] }),
      'untrusted',
      /"CN=Not A CA,O=Example" is not a CA certificate/,
    );
    const noCertSign = makeIdentity('No Cert Sign', { issuer: root, ca: true, keyUsage: ['digitalSignature'] });
    const underNoCertSign = makeIdentity('Under No Cert Sign', { issuer: noCertSign });
    // OpenSSL's issuer check already refuses it; either way there is no path.
    assert.throws(() => validatePath(cert(underNoCertSign), [cert(noCertSign)], [cert(root)]), /no path to a trust anchor|may not sign certificates/);
    const limitedRoot = makeIdentity('Limited Root', { pathLength: 0 });
    const middle = makeIdentity('Middle CA', { issuer: limitedRoot, ca: true });
    const bottom = makeIdentity('Bottom', { issuer: middle });
    assert.throws(() => validatePath(cert(bottom), [cert(middle)], [cert(limitedRoot)]), /allows 0 intermediate certificates below it, the path has 1/);
    assert.equal(validatePath(cert(makeIdentity('Direct', { issuer: limitedRoot })), [], [cert(limitedRoot)]).length, 2);
  });

  it('refuses a signer whose key usage does not allow signatures, and a certificate with a critical extension it does not process', () => {
    const encipherOnly = makeIdentity('Cert Signer Only', { issuer: root, keyUsage: ['keyCertSign'], ca: true });
    assert.throws(() => validatePath(cert(encipherOnly), [], [cert(root)]), /may not make digital signatures/);
    const critical = seq(oid('1.2.3.4.5'), bool(true), octets(tlv(0x05)));
    const strange = makeIdentity('Strange Signer', { issuer: root, extensions: [critical] });
    assert.throws(() => validatePath(cert(strange), [], [cert(root)]), /critical extensions this verifier does not process \(1\.2\.3\.4\.5\)/);
  });

  it('bounds the search: certificates issuing each other in a loop end in a refusal', () => {
    // A issued by itself and, re-issued with the same key, by B, which A issued: A -> B -> A -> ...
    const a = makeIdentity('Loop A', { ca: true });
    const b = makeIdentity('Loop B', { issuer: a, ca: true });
    const aByB = makeIdentity('Loop A', { issuer: b, ca: true, keyOf: a });
    const leaf = makeIdentity('Loop Leaf', { issuer: b });
    assert.throws(() => validatePath(cert(leaf), [cert(a), cert(b), cert(aByB)], [cert(otherRoot)]), /no path to a trust anchor/);
  });
});

describe('verifySignedData: garbage', () => {
  const valid = signCms(CONTENT, signer);

  it('refuses what is not a SignedData with a CmsError, whatever the bytes', () => {
    const inputs: Buffer[] = [
      Buffer.alloc(0),
      Buffer.from('not a signature'),
      Buffer.from([0x30]),
      Buffer.from([0x30, 0x84, 0xff, 0xff, 0xff, 0xff]),
      Buffer.from([0x30, 0x80]),
      Buffer.from([0x30, 0x03, 0x06, 0x01, 0x2a, 0x00]),
      seq(oid('1.2.840.113549.1.7.1'), tlv(0xa0, octets(CONTENT))),
      Buffer.concat([valid, Buffer.from([0])]),
      valid.subarray(0, valid.length - 1),
      // Indefinite lengths nested far deeper than any CMS.
      Buffer.concat([Buffer.alloc(5000, 0x30).map((_, i) => (i % 2 ? 0x80 : 0x30)), Buffer.alloc(5000, 0)]),
    ];
    for (let i = 0; i < 300; i += 1) {
      const mutated = Buffer.from(valid);
      for (let flips = 0; flips < 1 + (i % 4); flips += 1) mutated[randomBytes(4).readUInt32BE() % mutated.length] = randomBytes(1)[0]!;
      inputs.push(mutated);
    }
    for (let i = 0; i < 50; i += 1) inputs.push(randomBytes(i * 7));
    for (const input of inputs) {
      try {
        verifySignedData(input, { contents: [CONTENT], anchors: [cert(root)] });
      } catch (error) {
        assert.ok(error instanceof CmsError, `${input.toString('hex').slice(0, 80)}: ${String(error)}`);
      }
    }
    assertFails(() => verifySignedData(Buffer.from('not a signature'), { contents: [CONTENT] }), 'malformed');
    assertFails(() => verifySignedData(seq(oid('1.2.840.113549.1.7.1'), tlv(0xa0, octets(CONTENT))), { contents: [CONTENT] }), 'malformed', /not SignedData/);
  });

  it('reads BER: indefinite lengths and a constructed encapsulated content', () => {
    const ber = signCms(CONTENT, signer, { attached: true, ber: true });
    assert.equal(ber.subarray(0, 2).toString('hex'), '3080');
    assert.equal(verifySignedData(ber, { contents: [CONTENT], anchors: [cert(root)] }).length, 1);
    assertFails(() => verifySignedData(ber, { contents: [Buffer.from('other')] }), 'other-content');
    assert.equal(verifySignedData(signCms(CONTENT, signer, { ber: true }), { contents: [CONTENT], anchors: [cert(root)] }).length, 1);
  });

  it('parses certificates strictly enough: refuses trailing bytes and truncation', () => {
    assert.throws(() => parseCertificate(Buffer.concat([root.der, Buffer.from([0])])));
    assert.throws(() => parseCertificate(root.der.subarray(0, 40)));
    assert.throws(() => decode(Buffer.from([0x04, 0x80, 0, 0])), Asn1Error);
  });
});

describe('interoperability', () => {
  let openssl = true;
  try {
    execFileSync('openssl', ['version'], { stdio: 'ignore' });
  } catch {
    openssl = false;
  }

  it('verifies what openssl cms -sign makes (RSA, detached and encapsulated, streamed BER)', { skip: !openssl && 'no openssl' }, () => {
    const rsaRoot = makeIdentity('OpenSSL Root', { key: 'rsa' });
    const rsa = makeIdentity('OpenSSL Signer', { issuer: rsaRoot, key: 'rsa' });
    const dir = mkdtempSync(join(tmpdir(), 'cms-'));
    try {
      writeFileSync(join(dir, 'signer.pem'), rsa.pem);
      writeFileSync(join(dir, 'key.pem'), rsa.privateKey.export({ type: 'pkcs8', format: 'pem' }));
      writeFileSync(join(dir, 'content'), CONTENT);
      const make = (...extra: string[]): Buffer => {
        execFileSync(
          'openssl',
          [
            'cms',
            '-sign',
            '-binary',
            '-in',
            join(dir, 'content'),
            '-signer',
            join(dir, 'signer.pem'),
            '-inkey',
            join(dir, 'key.pem'),
            '-outform',
            'DER',
            '-out',
            join(dir, 'out'),
            ...extra,
          ],
          {
            stdio: 'ignore',
          },
        );
        return readFileSync(join(dir, 'out'));
      };
      for (const [label, der] of [
        ['detached', make()],
        ['encapsulated', make('-nodetach')],
        ['streamed', make('-nodetach', '-stream')],
        ['PSS', make('-keyopt', 'rsa_padding_mode:pss')],
        ['no signed attributes', make('-noattr')],
      ] as const) {
        assert.equal(verifySignedData(der, { contents: [CONTENT], anchors: [cert(rsaRoot)] })[0]?.subjectName, 'CN=OpenSSL Signer,O=Example', label);
        assertFails(
          () => verifySignedData(der, { contents: [Buffer.from('other')], anchors: [cert(rsaRoot)] }),
          label === 'detached' || label === 'PSS' || label === 'no signed attributes' ? 'mismatch' : 'other-content',
        );
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
