// Reading HTTP Basic client credentials (RFC 6749 2.3.1): well-formed headers give the client id
// and secret; anything malformed gives undefined, never an exception.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { parseBasicCredentials } from '#lib/auth/basic.ts';

const basic = (text: string) => `Basic ${Buffer.from(text, 'utf8').toString('base64')}`;

describe('parseBasicCredentials', () => {
  it('reads the client id and secret, percent-decoding each part', () => {
    assert.deepEqual(parseBasicCredentials(basic('abc:s3cret')), { clientId: 'abc', clientSecret: 's3cret' });
    assert.deepEqual(parseBasicCredentials(basic('a%3Ab:x%25y:z')), { clientId: 'a:b', clientSecret: 'x%y:z' });
    assert.deepEqual(parseBasicCredentials(`bAsIc   ${Buffer.from('id:').toString('base64')}  `), { clientId: 'id', clientSecret: '' });
  });

  it('gives undefined for bad percent-encoding in the client id or the secret', () => {
    assert.equal(parseBasicCredentials(basic('%E0%A4%A:x')), undefined);
    assert.equal(parseBasicCredentials(basic('id:%')), undefined);
    assert.equal(parseBasicCredentials(basic('%zz:secret')), undefined);
  });

  it('gives undefined for headers that are not Basic credentials', () => {
    for (const header of [
      '',
      'Basic',
      'Basic ',
      'Bearer abc',
      basic('no-colon'),
      basic(':secret-without-id'),
      'Basic !!!notbase64',
      'Basic YWJj OmRlZg==',
      'Basic =abc',
    ]) {
      assert.equal(parseBasicCredentials(header), undefined, header);
    }
  });
});
