// The CLI's client pieces that need no VNFM: error lines from ProblemDetails and OAuth errors,
// paging links, Version headers, where the connection comes from, and the completion scripts.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { apiVersionFor, nextLink, problemLine, VnfmClient } from '../../cli/client.ts';
import { bashCompletion, completionTree, zshCompletion } from '../../cli/commands/completion.ts';
import { profilesPath, readProfiles, resolveConnection, saveProfile } from '../../cli/config.ts';
import { buildProgram } from '../../cli/program.ts';

describe('error lines', () => {
  it('prints ProblemDetails as Error <status>: <title>: <detail>', () => {
    assert.equal(problemLine(409, 'Conflict', { status: 409, title: 'Conflict', detail: 'it is INSTANTIATED' }), 'Error 409: Conflict: it is INSTANTIATED');
    assert.equal(problemLine(404, 'Not Found', { status: 404, detail: 'no such thing' }), 'Error 404: Not Found: no such thing');
    assert.equal(
      problemLine(401, 'Unauthorized', { error: 'invalid_client', error_description: 'bad secret' }),
      'Error 401: Unauthorized: invalid_client: bad secret',
    );
    assert.equal(problemLine(502, 'Bad Gateway', undefined, '<html>upstream</html>'), 'Error 502: Bad Gateway: <html>upstream</html>');
  });

  it('says which endpoint could not be reached', async () => {
    const refused = Object.assign(new TypeError('fetch failed'), { cause: { code: 'ECONNREFUSED' } });
    const client = new VnfmClient({ endpoint: 'http://vnfm.example:9890', fetch: async () => Promise.reject(refused) });
    await assert.rejects(client.get('/vnflcm/v2/vnf_instances'), /Could not reach the VNFM at http:\/\/vnfm.example:9890 \(ECONNREFUSED\)/);
  });

  it('turns an error answer into an ApiError with the problem', async () => {
    const client = new VnfmClient({
      endpoint: 'http://vnfm.example',
      fetch: async () =>
        new Response(JSON.stringify({ status: 422, title: 'Unprocessable Entity', detail: 'no flavour "x"' }), {
          status: 422,
          headers: { 'Content-Type': 'application/problem+json' },
        }),
    });
    await assert.rejects(client.get('/vnflcm/v2/vnf_instances/1'), { name: 'ApiError', message: 'Error 422: Unprocessable Entity: no flavour "x"' });
  });
});

describe('requests', () => {
  it('follows rel="next" links through every page', async () => {
    const seen: string[] = [];
    const client = new VnfmClient({
      endpoint: 'http://vnfm.example',
      fetch: async (url) => {
        seen.push(String(url));
        const last = String(url).includes('marker');
        return new Response(JSON.stringify([{ id: last ? 'b' : 'a' }]), {
          headers: last ? {} : { Link: '<http://vnfm.example/vnflcm/v2/vnf_instances?nextpage_opaque_marker=m1>; rel="next"' },
        });
      },
    });
    assert.deepEqual(await client.list('/vnflcm/v2/vnf_instances'), [{ id: 'a' }, { id: 'b' }]);
    assert.equal(seen.length, 2);
    assert.equal(nextLink('<http://x/a>; rel="prev", <http://x/b>; rel="next"'), 'http://x/b');
    assert.equal(nextLink(null), undefined);
  });

  it('sends the Version each API family wants and a bearer token fetched once', async () => {
    const headers: Array<Record<string, string>> = [];
    let tokens = 0;
    const client = new VnfmClient({
      endpoint: 'http://vnfm.example',
      credentials: { clientId: 'c', clientSecret: 's', tokenUrl: 'http://vnfm.example/oauth2/token' },
      fetch: async (url, init) => {
        if (String(url).endsWith('/oauth2/token')) {
          tokens += 1;
          return new Response(JSON.stringify({ access_token: 't1', token_type: 'Bearer' }));
        }
        headers.push(init?.headers as Record<string, string>);
        return new Response('[]');
      },
    });
    await client.get('/vnflcm/v2/vnf_instances');
    await client.get('/vnffm/v1/alarms');
    assert.equal(tokens, 1);
    assert.equal(headers[0]?.Version, '2.0.0');
    assert.equal(headers[1]?.Version, '1.5.0');
    assert.equal(headers[0]?.Authorization, 'Bearer t1');
    assert.equal(apiVersionFor('/vnfm/v1/vims'), undefined);
  });
});

describe('connection', () => {
  const env = () => {
    const home = mkdtempSync(join(tmpdir(), 'vnfm-cli-'));
    return { XDG_CONFIG_HOME: join(home, 'config'), VNFM_DATA_DIR: join(home, 'data') } as Record<string, string | undefined>;
  };

  it('uses the data folder credentials, with VNFM_ENDPOINT', () => {
    const e = env();
    mkdirSync(e.VNFM_DATA_DIR as string, { recursive: true });
    writeFileSync(
      join(e.VNFM_DATA_DIR as string, 'credentials.json'),
      JSON.stringify({ clientId: 'c', clientSecret: 's', tokenUrl: 'http://h:1/oauth2/token' }),
    );
    const connection = resolveConnection({}, { ...e, VNFM_ENDPOINT: 'http://h:1/' });
    assert.equal(connection.endpoint, 'http://h:1');
    assert.deepEqual(connection.credentials, { clientId: 'c', clientSecret: 's', tokenUrl: 'http://h:1/oauth2/token' });
    assert.equal(resolveConnection({ endpoint: 'http://other' }, e).endpoint, 'http://other');
  });

  it('saves profiles readable by the user alone and uses the one named', () => {
    const e = env();
    saveProfile('lab', { endpoint: 'http://lab:9890', clientId: 'c', clientSecret: 's', tokenUrl: 'http://lab:9890/oauth2/token' }, e);
    assert.equal(statSync(profilesPath(e)).mode & 0o777, 0o600);
    assert.deepEqual(Object.keys(readProfiles(e)), ['lab']);
    assert.equal(resolveConnection({ profile: 'lab' }, e).endpoint, 'http://lab:9890');
    assert.equal(resolveConnection({}, { ...e, VNFM_PROFILE: 'lab' }).credentials?.clientId, 'c');
    assert.throws(() => resolveConnection({ profile: 'nope' }, e), /No profile "nope"/);
    assert.equal(resolveConnection({}, e).credentials, undefined);
  });
});

describe('completion', () => {
  it('covers every command of the tree, with its options', () => {
    const program = buildProgram();
    const nodes = new Map(completionTree(program).map((node) => [node.path, node.words]));
    for (const path of [
      'vnfm package upload',
      'vnfm vnf instantiate',
      'vnfm op retry',
      'vnfm snapshot create',
      'vnfm vim register',
      'vnfm alarm ack',
      'vnfm watch',
    ]) {
      assert.ok(nodes.has(path), path);
    }
    assert.ok(nodes.get('vnfm vnf')?.includes('change-package'));
    assert.ok(nodes.get('vnfm vnf scale')?.includes('--aspect'));
    assert.ok(nodes.get('vnfm vnf list')?.includes('--endpoint'), 'global options after a command');
    assert.ok(bashCompletion(program).includes("['vnfm vnf list --output']='table json yaml'"));
    assert.match(zshCompletion(program), /^#compdef vnfm/);
  });

  it('writes a bash script bash accepts', { skip: spawnSync('bash', ['--version']).status !== 0 }, () => {
    const checked = spawnSync('bash', ['-n'], { input: bashCompletion(buildProgram()) });
    assert.equal(checked.status, 0, checked.stderr.toString());
  });
});
