// The one redaction rule: credential-named attributes of any type at any depth, and URL userinfo.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { redactSecrets, withoutUserinfo } from '#lib/redact.ts';

describe('redactSecrets', () => {
  it('drops credential-named attributes whatever their type and depth, and keeps the rest', () => {
    const request = {
      flavourId: 'simple',
      vimConnectionInfo: { vim1: { vimType: 'kubernetes', interfaceInfo: { endpoint: 'https://k8s', ssl_ca_cert: 'CA' }, accessInfo: 'as a string' } },
      additionalParams: {
        Password: 12345,
        os_passwd: 'p',
        nested: [{ clientSecret: { value: 'x' } }, { BEARER_TOKEN: ['a'] }],
        authentication: null,
        kept: 'yes',
        bypassCache: true,
      },
    };
    assert.deepEqual(redactSecrets(request), {
      flavourId: 'simple',
      vimConnectionInfo: { vim1: { vimType: 'kubernetes', interfaceInfo: { endpoint: 'https://k8s', ssl_ca_cert: 'CA' } } },
      additionalParams: { nested: [{}, {}], kept: 'yes', bypassCache: true },
    });
  });

  it('masks instead of dropping when given a marker (for logs)', () => {
    assert.deepEqual(redactSecrets({ user: 'u', password: { a: 1 } }, { marker: '[redacted]' }), { user: 'u', password: '[redacted]' });
  });

  it('removes userinfo from URLs anywhere in a string, and from error messages', () => {
    assert.equal(
      withoutUserinfo('GET http://user:pa55@host:8080/x?y=1 failed; see https://other/ok'),
      'GET http://host:8080/x?y=1 failed; see https://other/ok',
    );
    assert.equal(withoutUserinfo('ftp://only-user@host/file'), 'ftp://host/file');
    assert.equal(withoutUserinfo('mail me at a@b.example'), 'mail me at a@b.example');
    const redacted = redactSecrets({ error: new Error('fetch http://u:secret-pw@h/ failed') }) as { error: { message: string } };
    assert.equal(redacted.error.message, 'fetch http://h/ failed');
  });
});
