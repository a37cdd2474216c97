// Throwaway PKI for the signature tests, with node:crypto and a few lines of DER: key pairs,
// X.509 certificates (CA or end entity, chosen validity, key usage, path length) and CMS
// SignedData over a content (RFC 5652), detached or encapsulated, with the knobs the tests turn.
import { constants, createHash, generateKeyPairSync, type KeyObject, sign } from 'node:crypto';

// ---------------------------------------------------------------------------------------------
// DER

function lengthOf(length: number): Buffer {
  if (length < 0x80) return Buffer.from([length]);
  const bytes: number[] = [];
  for (let rest = length; rest > 0; rest = Math.floor(rest / 256)) bytes.unshift(rest % 256);
  return Buffer.from([0x80 | bytes.length, ...bytes]);
}

export function tlv(tag: number, ...content: Buffer[]): Buffer {
  const body = Buffer.concat(content);
  return Buffer.concat([Buffer.from([tag]), lengthOf(body.length), body]);
}

export const seq = (...content: Buffer[]): Buffer => tlv(0x30, ...content);
/** A DER SET OF: its elements in the order of their encodings. */
export const set = (...content: Buffer[]): Buffer => tlv(0x31, ...[...content].sort(Buffer.compare));
export const octets = (content: Buffer): Buffer => tlv(0x04, content);
export const utf8 = (text: string): Buffer => tlv(0x0c, Buffer.from(text, 'utf8'));
export const bool = (value: boolean): Buffer => tlv(0x01, Buffer.from([value ? 0xff : 0]));
/** [n] EXPLICIT (constructed) or IMPLICIT primitive. */
export const explicit = (n: number, ...content: Buffer[]): Buffer => tlv(0xa0 | n, ...content);

export function bits(content: Buffer, unused = 0): Buffer {
  return tlv(0x03, Buffer.from([unused]), content);
}

export function int(value: number | Buffer): Buffer {
  let bytes =
    typeof value === 'number'
      ? Buffer.from(
          value
            .toString(16)
            .padStart(2, '0')
            .replace(/^(.(..)*)$/, '0$1'),
          'hex',
        )
      : value;
  while (bytes.length > 1 && bytes[0] === 0 && bytes[1]! < 0x80) bytes = bytes.subarray(1);
  if (bytes[0]! >= 0x80) bytes = Buffer.concat([Buffer.from([0]), bytes]);
  return tlv(0x02, bytes);
}

export function oid(dotted: string): Buffer {
  const [first, second, ...rest] = dotted.split('.').map(Number);
  const out: number[] = [];
  for (const arc of [first! * 40 + second!, ...rest]) {
    const group: number[] = [arc % 128];
    for (let value = Math.floor(arc / 128); value > 0; value = Math.floor(value / 128)) group.unshift((value % 128) | 0x80);
    out.push(...group);
  }
  return tlv(0x06, Buffer.from(out));
}

function time(date: Date): Buffer {
  const iso = date.toISOString().replace(/[-:T]/g, '').slice(0, 14);
  const year = date.getUTCFullYear();
  return year >= 1950 && year < 2050 ? tlv(0x17, Buffer.from(`${iso.slice(2)}Z`)) : tlv(0x18, Buffer.from(`${iso}Z`));
}

// ---------------------------------------------------------------------------------------------
// Certificates

export type KeyKind = 'ec-p256' | 'ec-p384' | 'rsa';
export type HashName = 'sha1' | 'sha256' | 'sha384' | 'sha512';

export interface Identity {
  der: Buffer;
  pem: string;
  privateKey: KeyObject;
  publicKey: KeyObject;
  kind: KeyKind;
  /** DER of the subject and issuer Names. */
  name: Buffer;
  issuerName: Buffer;
  serialNumber: Buffer;
  subjectKeyIdentifier: Buffer;
  commonName: string;
}

export interface IdentityOptions {
  issuer?: Identity;
  key?: KeyKind;
  /** basicConstraints cA: by default, a self-signed certificate is a CA and an issued one is not. */
  ca?: boolean;
  pathLength?: number;
  /** keyUsage bits by name; no keyUsage extension when absent. */
  keyUsage?: Array<'digitalSignature' | 'nonRepudiation' | 'keyCertSign' | 'cRLSign'>;
  notBefore?: Date;
  notAfter?: Date;
  /** Extensions added as they are (DER Extension values). */
  extensions?: Buffer[];
  /** The key pair of another identity (a re-issued CA), instead of a new one. */
  keyOf?: Identity;
}

const KEY_USAGE_BITS = { digitalSignature: 0, nonRepudiation: 1, keyCertSign: 5, cRLSign: 6 } as const;
const ECDSA_WITH: Record<HashName, string> = {
  sha1: '1.2.840.10045.4.1',
  sha256: '1.2.840.10045.4.3.2',
  sha384: '1.2.840.10045.4.3.3',
  sha512: '1.2.840.10045.4.3.4',
};
const RSA_WITH: Record<HashName, string> = {
  sha1: '1.2.840.113549.1.1.5',
  sha256: '1.2.840.113549.1.1.11',
  sha384: '1.2.840.113549.1.1.12',
  sha512: '1.2.840.113549.1.1.13',
};
export const DIGEST_OIDS: Record<HashName, string> = {
  sha1: '1.3.14.3.2.26',
  sha256: '2.16.840.1.101.3.4.2.1',
  sha384: '2.16.840.1.101.3.4.2.2',
  sha512: '2.16.840.1.101.3.4.2.3',
};
export const ID_DATA = '1.2.840.113549.1.7.1';

function keyPair(kind: KeyKind): { privateKey: KeyObject; publicKey: KeyObject } {
  if (kind === 'rsa') return generateKeyPairSync('rsa', { modulusLength: 2048 });
  return generateKeyPairSync('ec', { namedCurve: kind === 'ec-p256' ? 'P-256' : 'P-384' });
}

function publicKeyBits(publicKey: KeyObject): Buffer {
  if (publicKey.asymmetricKeyType === 'rsa') return publicKey.export({ type: 'pkcs1', format: 'der' });
  const jwk = publicKey.export({ format: 'jwk' });
  return Buffer.concat([Buffer.from([4]), Buffer.from(jwk.x!, 'base64url'), Buffer.from(jwk.y!, 'base64url')]);
}

function algorithm(oidText: string, parameters?: Buffer): Buffer {
  return seq(oid(oidText), ...(parameters ? [parameters] : []));
}

/** How `signer` signs with `hash`: the AlgorithmIdentifier and the signature. */
function signWith(signer: { privateKey: KeyObject; kind: KeyKind }, hash: HashName, data: Buffer): { algorithm: Buffer; signature: Buffer } {
  if (signer.kind === 'rsa') return { algorithm: algorithm(RSA_WITH[hash], tlv(0x05)), signature: sign(hash, data, signer.privateKey) };
  return { algorithm: algorithm(ECDSA_WITH[hash]), signature: sign(hash, data, signer.privateKey) };
}

let serial = 1;

export function makeIdentity(commonName: string, options: IdentityOptions = {}): Identity {
  const kind = options.key ?? 'ec-p256';
  const number = serial++;
  const { privateKey, publicKey } = options.keyOf ?? keyPair(kind);
  const serialNumber = Buffer.from([0x10, number >> 8, number & 0xff]);
  const name = seq(set(seq(oid('2.5.4.10'), utf8('Example'))), set(seq(oid('2.5.4.3'), utf8(commonName))));
  const subjectKeyIdentifier = createHash('sha1').update(publicKeyBits(publicKey)).digest();
  const { issuer } = options;
  const ca = options.ca ?? !issuer;
  const extensions = [
    seq(oid('2.5.29.19'), bool(true), octets(seq(...(ca ? [bool(true)] : []), ...(ca && options.pathLength !== undefined ? [int(options.pathLength)] : [])))),
    seq(oid('2.5.29.14'), octets(octets(subjectKeyIdentifier))),
    seq(oid('2.5.29.35'), octets(seq(tlv(0x80, issuer ? issuer.subjectKeyIdentifier : subjectKeyIdentifier)))),
    ...(options.keyUsage ? [seq(oid('2.5.29.15'), bool(true), octets(keyUsageBits(options.keyUsage)))] : []),
    ...(options.extensions ?? []),
  ];
  const signer = issuer ?? { privateKey, kind };
  const signatureAlgorithm = signWith(signer, 'sha256', Buffer.alloc(0)).algorithm;
  const tbs = seq(
    explicit(0, int(2)),
    int(serialNumber),
    signatureAlgorithm,
    issuer ? issuer.name : name,
    seq(time(options.notBefore ?? new Date(Date.now() - 3_600_000)), time(options.notAfter ?? new Date(Date.now() + 365 * 86_400_000))),
    name,
    publicKey.export({ type: 'spki', format: 'der' }),
    explicit(3, seq(...extensions)),
  );
  const { signature } = signWith(signer, 'sha256', tbs);
  const der = seq(tbs, signatureAlgorithm, bits(signature));
  return {
    der,
    pem: pem('CERTIFICATE', der),
    privateKey,
    publicKey,
    kind,
    name,
    issuerName: issuer ? issuer.name : name,
    serialNumber,
    subjectKeyIdentifier,
    commonName,
  };
}

function keyUsageBits(usages: NonNullable<IdentityOptions['keyUsage']>): Buffer {
  let value = 0;
  for (const usage of usages) value |= 0x80 >> KEY_USAGE_BITS[usage];
  let unused = 0;
  while (unused < 7 && (value & (1 << unused)) === 0) unused += 1;
  return bits(Buffer.from([value]), value === 0 ? 0 : unused);
}

export function pem(label: string, der: Buffer): string {
  return `-----BEGIN ${label}-----\n${der.toString('base64').replace(/(.{64})/g, '$1\n')}\n-----END ${label}-----\n`;
}

// ---------------------------------------------------------------------------------------------
// CMS SignedData

export interface SignOptions {
  /** Encapsulate the content (eContent) instead of a detached signature. */
  attached?: boolean;
  /** Certificates in the SignedData: the signer's by default. */
  certificates?: Identity[];
  digest?: HashName;
  /** The signature algorithm: by the key (ECDSA or sha*WithRSAEncryption), rsaEncryption, or RSASSA-PSS. */
  signatureAlgorithm?: 'default' | 'rsaEncryption' | 'rsa-pss';
  /** The signer named by issuer and serial number (the default) or by subject key identifier. */
  sid?: 'issuerAndSerialNumber' | 'subjectKeyIdentifier';
  /** Signed attributes (content type and message digest): on by default. */
  signedAttributes?: boolean;
  /** Overrides of what the signed attributes say. */
  messageDigest?: Buffer;
  contentType?: string;
  eContentType?: string;
  /** BER as streaming encoders write it: indefinite lengths outside the signer info, the content in chunks. */
  ber?: boolean;
}

export function signCms(content: Buffer, signer: Identity, options: SignOptions = {}): Buffer {
  const digest = options.digest ?? 'sha256';
  const digestAlgorithm = algorithm(DIGEST_OIDS[digest]);
  const eContentType = options.eContentType ?? ID_DATA;
  let attributes: Buffer | undefined;
  if (options.signedAttributes !== false) {
    attributes = set(
      seq(oid('1.2.840.113549.1.9.3'), set(oid(options.contentType ?? eContentType))),
      seq(oid('1.2.840.113549.1.9.4'), set(octets(options.messageDigest ?? createHash(digest).update(content).digest()))),
    );
  }
  const signed = attributes ?? content;
  let signatureAlgorithm: Buffer;
  let signature: Buffer;
  if (options.signatureAlgorithm === 'rsa-pss') {
    const hash = algorithm(DIGEST_OIDS[digest]);
    const saltLength = 32;
    signatureAlgorithm = algorithm(
      '1.2.840.113549.1.1.10',
      seq(explicit(0, hash), explicit(1, algorithm('1.2.840.113549.1.1.8', hash)), explicit(2, int(saltLength))),
    );
    signature = sign(digest, signed, { key: signer.privateKey, padding: constants.RSA_PKCS1_PSS_PADDING, saltLength });
  } else if (options.signatureAlgorithm === 'rsaEncryption') {
    signatureAlgorithm = algorithm('1.2.840.113549.1.1.1', tlv(0x05));
    signature = sign(digest, signed, signer.privateKey);
  } else {
    ({ algorithm: signatureAlgorithm, signature } = signWith(signer, digest, signed));
  }
  const bySki = options.sid === 'subjectKeyIdentifier';
  const signerInfo = seq(
    int(bySki ? 3 : 1),
    bySki ? tlv(0x80, signer.subjectKeyIdentifier) : seq(signer.issuerName, int(signer.serialNumber)),
    digestAlgorithm,
    ...(attributes ? [Buffer.concat([Buffer.from([0xa0]), attributes.subarray(1)])] : []),
    signatureAlgorithm,
    octets(signature),
  );
  const certificates = options.certificates ?? [signer];
  const wrap = (tag: number, ...inner: Buffer[]): Buffer =>
    options.ber ? Buffer.concat([Buffer.from([tag, 0x80]), ...inner, Buffer.from([0, 0])]) : tlv(tag, ...inner);
  const eContent = options.ber ? wrap(0x24, ...[content.subarray(0, 16), content.subarray(16)].map((chunk) => octets(chunk))) : octets(content);
  const signedData = wrap(
    0x30,
    int(bySki ? 3 : 1),
    set(digestAlgorithm),
    wrap(0x30, oid(eContentType), ...(options.attached ? [wrap(0xa0, eContent)] : [])),
    ...(certificates.length > 0 ? [wrap(0xa0, ...certificates.map((certificate) => certificate.der))] : []),
    wrap(0x31, signerInfo),
  );
  return wrap(0x30, oid('1.2.840.113549.1.7.2'), wrap(0xa0, signedData));
}
