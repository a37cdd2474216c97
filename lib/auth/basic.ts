// HTTP Basic client authentication as OAuth 2.0 defines it (RFC 6749 2.3.1, RFC 7617): the
// header carries base64("<client id>:<client secret>"), each part form-urlencoded first. Shared by
// the API edge (which refuses a malformed header before asking the token endpoint) and the local
// token endpoint, so both read a header the same way and neither can throw on hostile input.

export interface BasicCredentials {
  clientId: string;
  clientSecret: string;
}

const BASE64 = /^[A-Za-z0-9+/]+={0,2}$/;

function formDecoded(text: string): string | undefined {
  try {
    return decodeURIComponent(text);
  } catch {
    return undefined; // bad percent-encoding (a URIError)
  }
}

/**
 * The client id and secret of an `Authorization: Basic ...` header value (the scheme included),
 * or undefined when it is not well-formed Basic credentials: another scheme, not base64, no colon,
 * an empty client id, or bad percent-encoding in either part.
 */
export function parseBasicCredentials(header: string): BasicCredentials | undefined {
  const found = /^basic\s+(\S+)\s*$/i.exec(header.trim());
  if (!found || !BASE64.test(found[1] as string)) return undefined;
  const decoded = Buffer.from(found[1] as string, 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  if (colon < 1) return undefined;
  const clientId = formDecoded(decoded.slice(0, colon));
  const clientSecret = formDecoded(decoded.slice(colon + 1));
  if (!clientId || clientSecret === undefined) return undefined;
  return { clientId, clientSecret };
}
