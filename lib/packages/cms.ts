// CMS SignedData verification (RFC 5652 clauses 5.4-5.6) with node:crypto: a small BER/DER reader for
// the structure, X509Certificate for the certificates, crypto.verify for the signatures, and a bounded
// search for a certificate path from the signer to a trust anchor (RFC 5280 clause 6, without revocation).
import { constants, createHash, type KeyObject, type VerifyKeyObjectInput, verify as verifySignature, X509Certificate } from 'node:crypto';

// ---------------------------------------------------------------------------------------------
// BER/DER reader

/** A value that is not well-formed BER, or not the ASN.1 structure expected. */
export class Asn1Error extends Error {
  override name = 'Asn1Error';
}

export interface Tlv {
  /** 0 universal, 1 application, 2 context-specific, 3 private. */
  readonly cls: number;
  readonly constructed: boolean;
  readonly tag: number;
  /** The whole encoding: identifier, length, content (and the end-of-contents octets of an indefinite length). */
  readonly raw: Buffer;
  /** The content octets. */
  readonly content: Buffer;
}

const UNIVERSAL = 0;
const CONTEXT = 2;
const BOOLEAN = 1;
const INTEGER = 2;
const BIT_STRING = 3;
const OCTET_STRING = 4;
const OID = 6;
const SEQUENCE = 16;
const SET = 17;
/** Nesting of indefinite-length values read at once, and of constructed strings. */
const MAX_NESTING = 32;

function readTlv(buffer: Buffer, offset: number, nesting: number): Tlv {
  if (nesting > MAX_NESTING) throw new Asn1Error('values nested too deeply');
  let at = offset;
  const next = (): number => {
    if (at >= buffer.length) throw new Asn1Error('truncated value');
    const value = buffer[at]!;
    at += 1;
    return value;
  };
  const first = next();
  const cls = first >> 6;
  const constructed = (first & 0x20) !== 0;
  let tag = first & 0x1f;
  if (tag === 0x1f) {
    tag = 0;
    for (let count = 0; ; count += 1) {
      if (count === 3) throw new Asn1Error('tag number too large');
      const octet = next();
      tag = tag * 128 + (octet & 0x7f);
      if ((octet & 0x80) === 0) break;
    }
  }
  const lengthOctet = next();
  let contentStart = at;
  let contentEnd: number;
  let end: number;
  if (lengthOctet === 0x80) {
    if (!constructed) throw new Asn1Error('indefinite length on a primitive value');
    let cursor = contentStart;
    for (;;) {
      if (cursor + 2 > buffer.length) throw new Asn1Error('truncated value: no end-of-contents');
      if (buffer[cursor] === 0 && buffer[cursor + 1] === 0) {
        contentEnd = cursor;
        end = cursor + 2;
        break;
      }
      cursor += readTlv(buffer, cursor, nesting + 1).raw.length;
    }
  } else {
    let length = lengthOctet;
    if (lengthOctet & 0x80) {
      const count = lengthOctet & 0x7f;
      if (count > 4) throw new Asn1Error('length too large');
      length = 0;
      for (let i = 0; i < count; i += 1) length = length * 256 + next();
    }
    contentStart = at;
    contentEnd = contentStart + length;
    if (contentEnd > buffer.length) throw new Asn1Error('truncated value');
    end = contentEnd;
  }
  return { cls, constructed, tag, raw: buffer.subarray(offset, end), content: buffer.subarray(contentStart, contentEnd) };
}

/** Exactly one value, with nothing after it. */
export function decode(buffer: Buffer): Tlv {
  const value = readTlv(buffer, 0, 0);
  if (value.raw.length !== buffer.length) throw new Asn1Error(`${buffer.length - value.raw.length} bytes after the value`);
  return value;
}

/** The values inside a constructed value. */
export function children(value: Tlv): Tlv[] {
  if (!value.constructed) throw new Asn1Error('a primitive value where a constructed one is expected');
  const items: Tlv[] = [];
  for (let offset = 0; offset < value.content.length; ) {
    const item = readTlv(value.content, offset, 0);
    items.push(item);
    offset += item.raw.length;
  }
  return items;
}

function expect(value: Tlv | undefined, what: string, tag: number, cls = UNIVERSAL): Tlv {
  if (!value || value.cls !== cls || value.tag !== tag) throw new Asn1Error(`${what} is missing or has the wrong type`);
  const constructed = cls === UNIVERSAL ? tag === SEQUENCE || tag === SET : value.constructed;
  if (value.constructed !== constructed && !(cls === UNIVERSAL && (tag === OCTET_STRING || tag === BIT_STRING))) {
    throw new Asn1Error(`${what} is ${value.constructed ? 'constructed' : 'primitive'}`);
  }
  return value;
}

function is(value: Tlv | undefined, tag: number, cls = UNIVERSAL): value is Tlv {
  return value !== undefined && value.cls === cls && value.tag === tag;
}

export function oidOf(value: Tlv | undefined, what: string): string {
  const { content, constructed } = expect(value, what, OID);
  if (constructed || content.length === 0 || (content.at(-1)! & 0x80) !== 0) throw new Asn1Error(`${what} is not a valid object identifier`);
  const arcs: number[] = [];
  let arc = 0;
  for (const octet of content) {
    if (arc === 0 && octet === 0x80) throw new Asn1Error(`${what} is not a valid object identifier`);
    arc = arc * 128 + (octet & 0x7f);
    if (arc > Number.MAX_SAFE_INTEGER / 128) throw new Asn1Error(`${what} has an arc too large`);
    if ((octet & 0x80) === 0) {
      if (arcs.length === 0) arcs.push(arc < 80 ? Math.floor(arc / 40) : 2, arc < 80 ? arc % 40 : arc - 80);
      else arcs.push(arc);
      arc = 0;
    }
  }
  return arcs.join('.');
}

function integerOf(value: Tlv | undefined, what: string): Buffer {
  const integer = expect(value, what, INTEGER);
  if (integer.constructed || integer.content.length === 0) throw new Asn1Error(`${what} is not a valid integer`);
  return integer.content;
}

function smallIntegerOf(value: Tlv | undefined, what: string): number {
  const bytes = integerOf(value, what);
  if (bytes.length > 4 || (bytes[0]! & 0x80) !== 0) throw new Asn1Error(`${what} is out of range`);
  return bytes.reduce((sum, octet) => sum * 256 + octet, 0);
}

/** The octets of an OCTET STRING, primitive or (BER) constructed of OCTET STRINGs. */
function octetsOf(value: Tlv | undefined, what: string, nesting = 0): Buffer {
  const octets = expect(value, what, OCTET_STRING);
  if (!octets.constructed) return octets.content;
  if (nesting >= MAX_NESTING) throw new Asn1Error(`${what} is nested too deeply`);
  return Buffer.concat(children(octets).map((part) => octetsOf(part, what, nesting + 1)));
}

function bitsOf(value: Tlv | undefined, what: string): Buffer {
  const bits = expect(value, what, BIT_STRING);
  if (bits.constructed || bits.content.length === 0 || bits.content[0]! > 7) throw new Asn1Error(`${what} is not a valid bit string`);
  return bits.content;
}

// ---------------------------------------------------------------------------------------------
// Certificates

export interface Certificate {
  readonly der: Buffer;
  readonly x509: X509Certificate;
  /** The DER of the issuer and subject Names, and the serial number's content octets. */
  readonly issuer: Buffer;
  readonly subject: Buffer;
  readonly serialNumber: Buffer;
  /** RFC 4514 form of the subject, most specific attribute first. */
  readonly subjectName: string;
  /** The subjectPublicKey bits (what the SHA-1 key identifier of RFC 5280 4.2.1.2 hashes). */
  readonly publicKeyBits: Buffer;
  readonly subjectKeyIdentifier?: Buffer;
  /** basicConstraints pathLenConstraint. */
  readonly pathLength?: number;
  /** The keyUsage bits (bit 0 digitalSignature ... bit 8 decipherOnly), when the extension is present. */
  readonly keyUsage?: number;
  readonly nameConstraints: boolean;
  /** Critical extensions this verifier does not process (a certificate carrying one is not accepted on a path). */
  readonly unsupportedCritical: string[];
}

const KEY_USAGE = { digitalSignature: 0, nonRepudiation: 1, keyCertSign: 5 } as const;

const EXTENSIONS = {
  subjectKeyIdentifier: '2.5.29.14',
  keyUsage: '2.5.29.15',
  subjectAltName: '2.5.29.17',
  issuerAltName: '2.5.29.18',
  basicConstraints: '2.5.29.19',
  nameConstraints: '2.5.29.30',
  certificatePolicies: '2.5.29.32',
  authorityKeyIdentifier: '2.5.29.35',
  extKeyUsage: '2.5.29.37',
} as const;
/** Extensions whose meaning this verifier applies, or that do not restrict a path (alternative names, policies under any-policy, extended key usage). */
const UNDERSTOOD = new Set<string>(Object.values(EXTENSIONS));

function hasBit(bits: number | undefined, bit: number): boolean {
  return bits !== undefined && (bits & (1 << bit)) !== 0;
}

/** Reads a DER certificate; throws (Asn1Error or node's error) when it is not one. */
export function parseCertificate(der: Buffer): Certificate {
  const x509 = new X509Certificate(der);
  const [tbs] = children(expect(decode(der), 'the certificate', SEQUENCE));
  const fields = children(expect(tbs, 'the TBSCertificate', SEQUENCE));
  let index = is(fields[0], 0, CONTEXT) ? 1 : 0;
  const serialNumber = integerOf(fields[index++], 'the serial number');
  expect(fields[index++], 'the signature algorithm', SEQUENCE);
  const issuer = expect(fields[index++], 'the issuer', SEQUENCE);
  expect(fields[index++], 'the validity', SEQUENCE);
  const subject = expect(fields[index++], 'the subject', SEQUENCE);
  const spki = children(expect(fields[index++], 'the subject public key info', SEQUENCE));
  const publicKeyBits = bitsOf(spki[1], 'the subject public key').subarray(1);

  let subjectKeyIdentifier: Buffer | undefined;
  let pathLength: number | undefined;
  let keyUsage: number | undefined;
  let nameConstraints = false;
  const unsupportedCritical: string[] = [];
  const extensions = fields.slice(index).find((field) => is(field, 3, CONTEXT));
  const seen = new Set<string>();
  for (const extension of extensions ? children(expect(children(extensions)[0], 'the extensions', SEQUENCE)) : []) {
    const parts = children(expect(extension, 'an extension', SEQUENCE));
    const id = oidOf(parts[0], 'an extension id');
    if (seen.has(id)) throw new Asn1Error(`extension ${id} appears twice`);
    seen.add(id);
    const critical = is(parts[1], BOOLEAN) ? parts[1].content[0] !== 0 : false;
    const value = octetsOf(parts.at(-1), `extension ${id}`);
    if (critical && !UNDERSTOOD.has(id)) unsupportedCritical.push(id);
    if (id === EXTENSIONS.subjectKeyIdentifier) subjectKeyIdentifier = octetsOf(decode(value), 'the subject key identifier');
    if (id === EXTENSIONS.nameConstraints) nameConstraints = true;
    if (id === EXTENSIONS.basicConstraints) {
      const constraints = children(expect(decode(value), 'basicConstraints', SEQUENCE));
      const length = constraints.find((item) => is(item, INTEGER));
      if (length) pathLength = smallIntegerOf(length, 'pathLenConstraint');
    }
    if (id === EXTENSIONS.keyUsage) {
      const bits = bitsOf(decode(value), 'keyUsage');
      keyUsage = 0;
      for (let bit = 0; bit < (bits.length - 1) * 8 && bit < 16; bit += 1) {
        if (bits[1 + (bit >> 3)]! & (0x80 >> (bit & 7))) keyUsage |= 1 << bit;
      }
    }
  }
  return {
    der,
    x509,
    issuer: issuer.raw,
    subject: subject.raw,
    serialNumber,
    subjectName: distinguishedName(subject),
    publicKeyBits,
    ...(subjectKeyIdentifier ? { subjectKeyIdentifier } : {}),
    ...(pathLength !== undefined ? { pathLength } : {}),
    ...(keyUsage !== undefined ? { keyUsage } : {}),
    nameConstraints,
    unsupportedCritical,
  };
}

const NAME_TYPES: Record<string, string> = {
  '2.5.4.3': 'CN',
  '2.5.4.6': 'C',
  '2.5.4.7': 'L',
  '2.5.4.8': 'ST',
  '2.5.4.10': 'O',
  '2.5.4.11': 'OU',
  '2.5.4.5': 'serialNumber',
  '0.9.2342.19200300.100.1.25': 'DC',
  '1.2.840.113549.1.9.1': 'emailAddress',
};

/** The text of a directory string, or undefined for a value that is not one. */
function stringOf(value: Tlv | undefined): string | undefined {
  if (!value || value.cls !== UNIVERSAL || value.constructed) return undefined;
  switch (value.tag) {
    case 12: // UTF8String
      return value.content.toString('utf8');
    case 30: // BMPString
      return Buffer.from(value.content).swap16().toString('utf16le');
    case 28: {
      // UniversalString
      const points: number[] = [];
      for (let i = 0; i + 4 <= value.content.length; i += 4) points.push(value.content.readUInt32BE(i));
      try {
        return String.fromCodePoint(...points);
      } catch {
        return undefined;
      }
    }
    case 18: // NumericString
    case 19: // PrintableString
    case 20: // TeletexString
    case 21: // VideotexString
    case 22: // IA5String
    case 25: // GraphicString
    case 26: // VisibleString
    case 27: // GeneralString
      return value.content.toString('latin1');
    default:
      return undefined;
  }
}

/** RFC 4514 string form of a Name (most specific attribute first); a value that is not a string shows as "#". */
function distinguishedName(name: Tlv): string {
  const attributes: string[] = [];
  for (const rdn of children(name)) {
    for (const attribute of children(expect(rdn, 'a relative distinguished name', SET))) {
      const [type, value] = children(expect(attribute, 'a name attribute', SEQUENCE));
      const oid = oidOf(type, 'a name attribute type');
      const escaped = (stringOf(value) ?? '#')
        .replace(/([,+"\\<>;])/g, '\\$1')
        .replace(/^([ #])/, '\\$1')
        .replace(/ $/, '\\ ');
      attributes.push(`${NAME_TYPES[oid] ?? oid}=${escaped}`);
    }
  }
  return attributes.reverse().join(',');
}

// ---------------------------------------------------------------------------------------------
// SignedData

export const ID_DATA = '1.2.840.113549.1.7.1';
export const ID_SIGNED_DATA = '1.2.840.113549.1.7.2';
const ID_CONTENT_TYPE = '1.2.840.113549.1.9.3';
const ID_MESSAGE_DIGEST = '1.2.840.113549.1.9.4';

export interface SignerInfo {
  readonly sid: { issuer: Buffer; serialNumber: Buffer } | { keyIdentifier: Buffer };
  readonly digestAlgorithm: string;
  /** The signed attributes (type and the values of each), and their DER as a SET: what the signature covers. */
  readonly signedAttrs?: { attributes: Array<{ type: string; values: Tlv[] }>; der: Buffer };
  readonly signatureAlgorithm: { oid: string; parameters?: Tlv };
  readonly signature: Buffer;
}

export interface SignedData {
  readonly eContentType: string;
  readonly eContent?: Buffer;
  /** The DER of each certificate of the certificates field (other kinds of certificate are left out). */
  readonly certificates: Buffer[];
  readonly signerInfos: SignerInfo[];
}

function algorithmOf(value: Tlv | undefined, what: string): { oid: string; parameters?: Tlv } {
  const [oid, parameters] = children(expect(value, what, SEQUENCE));
  return { oid: oidOf(oid, what), ...(parameters ? { parameters } : {}) };
}

/** ContentInfo -> SignedData; throws an Asn1Error saying what is wrong. */
export function parseSignedData(der: Buffer): SignedData {
  const [contentType, content] = children(expect(decode(der), 'the ContentInfo', SEQUENCE));
  const type = oidOf(contentType, 'the content type');
  if (type !== ID_SIGNED_DATA) throw new Asn1Error(`content type is ${type}, not SignedData`);
  const [signedData] = children(expect(content, 'the content', 0, CONTEXT));
  const fields = children(expect(signedData, 'the SignedData', SEQUENCE));
  integerOf(fields[0], 'the SignedData version');
  expect(fields[1], 'the digest algorithms', SET);
  const [eContentType, eContent] = children(expect(fields[2], 'the encapsulated content info', SEQUENCE));
  let index = 3;
  const certificates: Buffer[] = [];
  if (is(fields[index], 0, CONTEXT)) {
    for (const certificate of children(fields[index]!)) {
      if (is(certificate, SEQUENCE)) certificates.push(certificate.raw);
    }
    index += 1;
  }
  if (is(fields[index], 1, CONTEXT)) index += 1;
  const signerInfos = children(expect(fields[index], 'the signer infos', SET)).map(parseSignerInfo);
  if (index + 1 !== fields.length) throw new Asn1Error('unexpected fields after the signer infos');
  return {
    eContentType: oidOf(eContentType, 'the encapsulated content type'),
    ...(eContent ? { eContent: octetsOf(children(expect(eContent, 'the encapsulated content', 0, CONTEXT))[0], 'the encapsulated content') } : {}),
    certificates,
    signerInfos,
  };
}

function parseSignerInfo(value: Tlv): SignerInfo {
  const fields = children(expect(value, 'a signer info', SEQUENCE));
  integerOf(fields[0], 'the signer info version');
  const sidField = fields[1];
  let sid: SignerInfo['sid'];
  if (is(sidField, 0, CONTEXT)) {
    if (sidField.constructed) throw new Asn1Error('the subject key identifier is constructed');
    sid = { keyIdentifier: sidField.content };
  } else {
    const [issuer, serialNumber] = children(expect(sidField, 'the signer identifier', SEQUENCE));
    sid = { issuer: expect(issuer, 'the signer issuer', SEQUENCE).raw, serialNumber: integerOf(serialNumber, 'the signer serial number') };
  }
  const digestAlgorithm = algorithmOf(fields[2], 'the digest algorithm').oid;
  let index = 3;
  let signedAttrs: SignerInfo['signedAttrs'];
  const attrs = fields[index];
  if (is(attrs, 0, CONTEXT)) {
    const attributes = children(attrs).map((attribute) => {
      const [type, values] = children(expect(attribute, 'a signed attribute', SEQUENCE));
      return { type: oidOf(type, 'a signed attribute type'), values: children(expect(values, 'signed attribute values', SET)) };
    });
    // The signature covers the attributes' DER with the SET OF tag in place of [0] IMPLICIT.
    signedAttrs = { attributes, der: Buffer.concat([Buffer.from([0x31]), attrs.raw.subarray(1)]) };
    index += 1;
  }
  const signatureAlgorithm = algorithmOf(fields[index], 'the signature algorithm');
  const signature = octetsOf(fields[index + 1], 'the signature');
  return { sid, digestAlgorithm, ...(signedAttrs ? { signedAttrs } : {}), signatureAlgorithm, signature };
}

/** The certificate a signer info names, by issuer and serial number or by subject key identifier. */
export function findSignerCertificate(signer: SignerInfo, certificates: readonly Certificate[]): Certificate | undefined {
  const { sid } = signer;
  if ('keyIdentifier' in sid) {
    return certificates.find(
      (certificate) =>
        certificate.subjectKeyIdentifier?.equals(sid.keyIdentifier) || createHash('sha1').update(certificate.publicKeyBits).digest().equals(sid.keyIdentifier),
    );
  }
  return certificates.find((certificate) => certificate.issuer.equals(sid.issuer) && certificate.serialNumber.equals(sid.serialNumber));
}

const DIGESTS: Record<string, string> = {
  '1.3.14.3.2.26': 'sha1',
  '2.16.840.1.101.3.4.2.1': 'sha256',
  '2.16.840.1.101.3.4.2.2': 'sha384',
  '2.16.840.1.101.3.4.2.3': 'sha512',
};
const RSA_ENCRYPTION = '1.2.840.113549.1.1.1';
const RSA_PSS = '1.2.840.113549.1.1.10';
const MGF1 = '1.2.840.113549.1.1.8';
const RSA_PKCS1: Record<string, string> = {
  '1.2.840.113549.1.1.5': 'sha1',
  '1.2.840.113549.1.1.11': 'sha256',
  '1.2.840.113549.1.1.12': 'sha384',
  '1.2.840.113549.1.1.13': 'sha512',
};
const ECDSA: Record<string, string> = {
  '1.2.840.10045.4.1': 'sha1',
  '1.2.840.10045.4.3.2': 'sha256',
  '1.2.840.10045.4.3.3': 'sha384',
  '1.2.840.10045.4.3.4': 'sha512',
};
const CURVES = new Set(['prime256v1', 'secp384r1', 'secp521r1']);

function own<T>(table: Record<string, T>, key: string): T | undefined {
  return Object.hasOwn(table, key) ? table[key] : undefined;
}

/** How node:crypto verifies the signer's signature algorithm with this key; a string says why it cannot. */
function verification(signer: SignerInfo, key: KeyObject, digest: string): { hash: string; key: VerifyKeyObjectInput } | string {
  const { oid, parameters } = signer.signatureAlgorithm;
  const type = key.asymmetricKeyType;
  const pkcs1 = oid === RSA_ENCRYPTION ? digest : own(RSA_PKCS1, oid);
  if (pkcs1) {
    if (type !== 'rsa') return `signature algorithm ${oid} needs an RSA key, the signer's key is ${type}`;
    return { hash: pkcs1, key: { key, padding: constants.RSA_PKCS1_PADDING } };
  }
  const ecdsa = own(ECDSA, oid);
  if (ecdsa) {
    if (type !== 'ec') return `signature algorithm ${oid} needs an EC key, the signer's key is ${type}`;
    const curve = key.asymmetricKeyDetails?.namedCurve;
    if (!curve || !CURVES.has(curve)) return `unsupported elliptic curve ${curve ?? 'with explicit parameters'} (P-256, P-384 and P-521 are supported)`;
    return { hash: ecdsa, key: { key, dsaEncoding: 'der' } };
  }
  if (oid === RSA_PSS) {
    if (type !== 'rsa' && type !== 'rsa-pss') return `signature algorithm RSASSA-PSS needs an RSA key, the signer's key is ${type}`;
    if (!parameters) return 'RSASSA-PSS without parameters';
    let hash = 'sha1';
    let mgfHash = 'sha1';
    let saltLength = 20;
    for (const field of children(expect(parameters, 'the RSASSA-PSS parameters', SEQUENCE))) {
      const [inner] = field.cls === CONTEXT && field.constructed ? children(field) : [];
      if (!inner) return 'malformed RSASSA-PSS parameters';
      if (field.tag === 0) {
        const name = own(DIGESTS, algorithmOf(inner, 'the RSASSA-PSS hash').oid);
        if (!name) return 'unsupported RSASSA-PSS hash algorithm';
        hash = name;
      } else if (field.tag === 1) {
        const mgf = algorithmOf(inner, 'the RSASSA-PSS mask generation');
        const name = mgf.oid === MGF1 ? own(DIGESTS, algorithmOf(mgf.parameters, 'the MGF1 hash').oid) : undefined;
        if (!name) return 'unsupported RSASSA-PSS mask generation function';
        mgfHash = name;
      } else if (field.tag === 2) {
        saltLength = smallIntegerOf(inner, 'the RSASSA-PSS salt length');
      } else if (field.tag === 3) {
        if (smallIntegerOf(inner, 'the RSASSA-PSS trailer field') !== 1) return 'unsupported RSASSA-PSS trailer field';
      } else {
        return 'malformed RSASSA-PSS parameters';
      }
    }
    if (mgfHash !== hash) return 'RSASSA-PSS with an MGF1 hash other than the signature hash is not supported';
    return { hash, key: { key, padding: constants.RSA_PKCS1_PSS_PADDING, saltLength } };
  }
  return `unsupported signature algorithm ${oid}`;
}

/**
 * Whether the signer info's signature over `content` verifies with `certificate`'s key: the signed
 * attributes' content type and message digest first (when there are signed attributes), then the signature.
 */
export function checkSignature(signer: SignerInfo, certificate: Certificate, content: Buffer): { verified: true } | { verified: false; problem?: string } {
  try {
    const digest = own(DIGESTS, signer.digestAlgorithm);
    if (!digest) return { verified: false, problem: `unsupported digest algorithm ${signer.digestAlgorithm}` };
    let signed = content;
    if (signer.signedAttrs) {
      const only = (type: string, name: string): Tlv => {
        const found = signer.signedAttrs!.attributes.filter((attribute) => attribute.type === type);
        if (found.length !== 1 || found[0]!.values.length !== 1) throw new Asn1Error(`the signed attributes need exactly one ${name} attribute with one value`);
        return found[0]!.values[0]!;
      };
      const contentType = oidOf(only(ID_CONTENT_TYPE, 'content-type'), 'the content-type attribute');
      if (contentType !== ID_DATA) return { verified: false, problem: `the content-type attribute is ${contentType}, not data` };
      const messageDigest = octetsOf(only(ID_MESSAGE_DIGEST, 'message-digest'), 'the message-digest attribute');
      if (!createHash(digest).update(content).digest().equals(messageDigest)) {
        return { verified: false, problem: "the message-digest attribute does not match the content's digest" };
      }
      signed = signer.signedAttrs.der;
    }
    const how = verification(signer, certificate.x509.publicKey, digest);
    if (typeof how === 'string') return { verified: false, problem: how };
    return verifySignature(how.hash, signed, how.key, signer.signature) ? { verified: true } : { verified: false };
  } catch (error) {
    return { verified: false, problem: error instanceof Error ? error.message : String(error) };
  }
}

// ---------------------------------------------------------------------------------------------
// Certificate paths

/** Intermediate certificates a path may have between the signer and its trust anchor. */
const MAX_INTERMEDIATES = 8;
/** Candidate issuers one path search may try (a name and key identifier match, then a signature verification). */
const MAX_ISSUER_CHECKS = 1000;

/** Why a certificate cannot be on a path at `now`, if it cannot. */
function unusable(certificate: Certificate, now: Date, role: string): string | undefined {
  const { x509 } = certificate;
  const name = `the ${role} "${certificate.subjectName}"`;
  if (x509.validFromDate > now) return `${name} is not valid before ${x509.validFromDate.toISOString()}`;
  if (x509.validToDate < now) return `${name} expired on ${x509.validToDate.toISOString()}`;
  if (certificate.unsupportedCritical.length > 0)
    return `${name} has critical extensions this verifier does not process (${certificate.unsupportedCritical.join(', ')})`;
  return undefined;
}

/** Why a certificate cannot issue the `below` certificates under it on a path, if it cannot. */
function cannotIssue(certificate: Certificate, below: number, role: string): string | undefined {
  const name = `the ${role} "${certificate.subjectName}"`;
  if (!certificate.x509.ca) return `${name} is not a CA certificate`;
  if (certificate.keyUsage !== undefined && !hasBit(certificate.keyUsage, KEY_USAGE.keyCertSign)) return `${name} may not sign certificates (keyUsage)`;
  if (certificate.pathLength !== undefined && below > certificate.pathLength) {
    return `${name} allows ${certificate.pathLength} intermediate certificates below it, the path has ${below}`;
  }
  return undefined;
}

function issued(subject: Certificate, issuer: Certificate): boolean {
  try {
    return subject.x509.checkIssued(issuer.x509) && subject.x509.verify(issuer.x509.publicKey);
  } catch {
    return false;
  }
}

/**
 * A path from `leaf` through `intermediates` to one of `anchors`, each certificate issued (name and
 * key identifier) and signed by the next, all valid at `now`, every issuer a CA allowed to sign
 * certificates within its path length. Returns the path (leaf first, anchor last) or throws an Error
 * saying why there is none.
 */
export function validatePath(leaf: Certificate, intermediates: readonly Certificate[], anchors: readonly Certificate[], now = new Date()): Certificate[] {
  const leafProblem = unusable(leaf, now, 'signer certificate');
  if (leafProblem) throw new Error(leafProblem);
  if (leaf.keyUsage !== undefined && !hasBit(leaf.keyUsage, KEY_USAGE.digitalSignature) && !hasBit(leaf.keyUsage, KEY_USAGE.nonRepudiation)) {
    throw new Error(`the signer certificate "${leaf.subjectName}" may not make digital signatures (keyUsage)`);
  }
  const isAnchor = (certificate: Certificate): boolean => anchors.some((anchor) => anchor.der.equals(certificate.der));
  const anchorProblem = (anchor: Certificate, below: number): string | undefined => {
    const { x509 } = anchor;
    const name = `the trust anchor "${anchor.subjectName}"`;
    if (x509.validFromDate > now) return `${name} is not valid before ${x509.validFromDate.toISOString()}`;
    if (x509.validToDate < now) return `${name} expired on ${x509.validToDate.toISOString()}`;
    return cannotIssue(anchor, below, 'trust anchor');
  };
  if (isAnchor(leaf)) {
    const problem = anchorProblem(leaf, 0);
    if (problem) throw new Error(problem);
    return [leaf];
  }

  let checks = 0;
  let firstProblem: string | undefined;
  const candidates = [...anchors, ...intermediates.filter((certificate) => !isAnchor(certificate))];
  const search = (path: Certificate[]): Certificate[] | undefined => {
    const current = path.at(-1)!;
    // Certificates between the leaf and the issuer being considered.
    const below = path.length - 1;
    for (const issuer of candidates) {
      if (path.some((onPath) => onPath.der.equals(issuer.der))) continue;
      checks += 1;
      if (checks > MAX_ISSUER_CHECKS) throw new Error('the certificates give too many possible paths to search');
      if (!issued(current, issuer)) continue;
      if (isAnchor(issuer)) {
        const problem = anchorProblem(issuer, below);
        if (!problem) return [...path, issuer];
        firstProblem ??= problem;
        continue;
      }
      if (below >= MAX_INTERMEDIATES) {
        firstProblem ??= `no path to a trust anchor within ${MAX_INTERMEDIATES} intermediate certificates`;
        continue;
      }
      const problem =
        unusable(issuer, now, 'intermediate certificate') ??
        cannotIssue(issuer, below, 'intermediate certificate') ??
        (issuer.nameConstraints
          ? `the intermediate certificate "${issuer.subjectName}" has name constraints, which this verifier does not process`
          : undefined);
      if (problem) {
        firstProblem ??= problem;
        continue;
      }
      const found = search([...path, issuer]);
      if (found) return found;
    }
    return undefined;
  };
  const path = search([leaf]);
  if (path) return path;
  throw new Error(firstProblem ?? 'no path to a trust anchor: no trust anchor or certificate in the package issued it');
}

// ---------------------------------------------------------------------------------------------
// Verification

export type CmsFailure =
  /** Not a ContentInfo holding a SignedData. */
  | 'malformed'
  /** The encapsulated content type is not id-data. */
  | 'not-data'
  | 'no-signer'
  /** The encapsulated content is none of the contents given. */
  | 'other-content'
  /** A signer's certificate is neither in the SignedData nor among the extra certificates. */
  | 'signer-missing'
  /** A signature (or its message digest) does not match the content. */
  | 'mismatch'
  /** A signer's certificate has no valid path to a trust anchor. */
  | 'untrusted';

export class CmsError extends Error {
  override name = 'CmsError';
  constructor(
    readonly failure: CmsFailure,
    message: string,
    readonly details: { contentType?: string; signer?: string; problem?: string } = {},
    options?: ErrorOptions,
  ) {
    super(message, options);
  }
}

export interface VerifyOptions {
  /** What was signed: one of these (variants of one text) must match, or equal the encapsulated content. */
  contents: readonly Buffer[];
  /** Certificates from beside the signature (signer and intermediates). */
  certificates?: readonly Certificate[];
  /** Trust anchors; with none, signatures are verified but no signer is validated. */
  anchors?: readonly Certificate[];
  now?: Date;
}

/**
 * Verifies every signer of a CMS SignedData (DER or BER) over the content and, with trust anchors,
 * validates each signer's certificate; returns the signers' certificates. Throws a CmsError.
 */
export function verifySignedData(der: Buffer, options: VerifyOptions): Certificate[] {
  let signedData: SignedData;
  let embedded: Certificate[];
  try {
    signedData = parseSignedData(der);
    embedded = signedData.certificates.map((certificate, index) => {
      try {
        return parseCertificate(certificate);
      } catch (error) {
        throw new Asn1Error(`certificate ${index + 1} cannot be read: ${messageOf(error)}`);
      }
    });
  } catch (error) {
    throw new CmsError('malformed', messageOf(error), {}, { cause: error });
  }
  if (signedData.eContentType !== ID_DATA) {
    throw new CmsError('not-data', `the content is of type ${signedData.eContentType}, not data`, { contentType: signedData.eContentType });
  }
  if (signedData.signerInfos.length === 0) throw new CmsError('no-signer', 'there is no signer');
  const { eContent } = signedData;
  if (eContent && !options.contents.some((content) => content.equals(eContent))) {
    throw new CmsError('other-content', 'the encapsulated content is not the content');
  }
  const certificates = [...embedded, ...(options.certificates ?? [])];
  const anchors = options.anchors ?? [];
  return signedData.signerInfos.map((signer) => {
    const certificate = findSignerCertificate(signer, certificates);
    if (!certificate) throw new CmsError('signer-missing', 'the signer certificate is missing');
    let problem: string | undefined;
    let verified = false;
    for (const content of eContent ? [eContent] : options.contents) {
      const result = checkSignature(signer, certificate, content);
      if (result.verified) {
        verified = true;
        break;
      }
      problem = result.problem ?? problem;
    }
    if (!verified) {
      throw new CmsError('mismatch', problem ?? 'the signature does not verify', { signer: certificate.subjectName, ...(problem ? { problem } : {}) });
    }
    if (anchors.length > 0) {
      try {
        validatePath(
          certificate,
          certificates.filter((other) => other !== certificate),
          anchors,
          options.now,
        );
      } catch (error) {
        throw new CmsError('untrusted', messageOf(error), { signer: certificate.subjectName }, { cause: error });
      }
    }
    return certificate;
  });
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
