// Nothing lost, nothing stuck, under load: kill -9 of the whole runtime while eight clients create
// VNF instances, three times over on the same data folder, each kill at another point of the burst
// (its writes to LevelDB, the queue journals and the outbox cut off wherever they were). Every start
// serves; every create that was answered 201 is there; and every instance that is there, answered or
// cut off by the kill, was announced to the subscribed NFVO (VnfIdentifierCreationNotification, at
// least once), from the queue or from the outbox. Then the deletions, killed half-way: no answered
// deletion is undone and every instance gone was announced gone. Once every instance is deleted,
// the package they were created from counts none (after the reconciliation of a start) and can be
// deleted.
import { it } from 'node:test';
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { startNfvoSink } from '../support/nfvo-sink.ts';
import { client, newDataDir, packageRecord, seedPackage, settle, startVnfm, type LocalVnfm } from '../support/runtime.ts';

const CLIENTS = 8;
const CALLBACK = '/cb/burst';

/** The ids of every VNF instance, through every page of the list (SOL013 Link rel="next"). */
async function instanceIds(call: ReturnType<typeof client>): Promise<Set<string>> {
  const ids = new Set<string>();
  let path: string | undefined = '/vnflcm/v2/vnf_instances';
  while (path) {
    const page = await call('GET', path);
    assert.equal(page.status, 200, page.text);
    for (const instance of page.body as Array<{ id: string }>) ids.add(instance.id);
    const next = /<([^>]+)>;\s*rel="next"/.exec(page.headers.get('link') ?? '')?.[1];
    path = next === undefined ? undefined : new URL(next).pathname + new URL(next).search;
  }
  return ids;
}

it('kill -9 in the middle of bursts of creates, three times over, and of deletions: every start serves, nothing answered is lost or undone, every change was announced, and the package ends unused', async () => {
  const dataDir = newDataDir();
  const sink = await startNfvoSink();
  sink.answer = () => 204;
  let vnfm: LocalVnfm = await startVnfm({ dataDir, processGroup: true });
  try {
    let call = client(vnfm);
    const subscribed = await call('POST', '/vnflcm/v2/subscriptions', { body: { callbackUri: `${sink.url}${CALLBACK}` } });
    assert.equal(subscribed.status, 201, subscribed.text);
    const pkg = await seedPackage(vnfm);
    const answered = new Set<string>();
    let name = 0;
    for (const round of [1, 2, 3]) {
      // The kill comes once this many creates of the round were answered, with the others in flight.
      const killAfter = 40 * round + 13;
      let answeredThisRound = 0;
      let killed: Promise<void> | undefined;
      const running = vnfm;
      await Promise.all(
        Array.from({ length: CLIENTS }, async () => {
          while (!killed) {
            const reply = await call('POST', '/vnflcm/v2/vnf_instances', { body: { vnfdId: pkg.vnfdId, vnfInstanceName: `burst-${name++}` } }).catch(
              () => undefined, // the runtime is gone: a create the kill cut off, answered or not
            );
            if (reply === undefined) break;
            assert.equal(reply.status, 201, reply.text);
            answered.add((reply.body as { id: string }).id);
            answeredThisRound += 1;
            if (answeredThisRound >= killAfter) killed ??= running.kill();
          }
        }),
      );
      await killed;
      vnfm = await startVnfm({ dataDir, processGroup: true });
      call = client(vnfm);
      await settle(vnfm);
      const there = await instanceIds(call);
      const lost = [...answered].filter((id) => !there.has(id));
      assert.deepEqual(lost, [], `round ${round}: answered creates missing after the restart`);
    }
    const there = await instanceIds(call);
    const announced = new Set(
      sink
        .accepted(CALLBACK)
        .filter((notification) => notification.notificationType === 'VnfIdentifierCreationNotification')
        .map((notification) => notification.vnfInstanceId),
    );
    const silent = [...there].filter((id) => !announced.has(id));
    assert.deepEqual(silent, [], 'instances whose creation was never announced');
    assert.ok(there.size >= answered.size && answered.size >= 40 + 80 + 120 + 39);
    // Deletions, eight at a time, killed half-way: no answered deletion is undone, and every instance
    // gone (answered or cut off) was announced gone.
    const doomed = [...there];
    const deletedAnswered = new Set<string>();
    let killed: Promise<void> | undefined;
    const running = vnfm;
    await Promise.all(
      Array.from({ length: CLIENTS }, async () => {
        for (let id = doomed.pop(); id !== undefined && !killed; id = doomed.pop()) {
          const deleted = await call('DELETE', `/vnflcm/v2/vnf_instances/${id}`).catch(() => undefined);
          if (deleted === undefined) break;
          assert.equal(deleted.status, 204, deleted.text);
          deletedAnswered.add(id);
          if (deletedAnswered.size >= there.size / 2) killed ??= running.kill();
        }
      }),
    );
    await killed;
    vnfm = await startVnfm({ dataDir, processGroup: true });
    call = client(vnfm);
    await settle(vnfm);
    const left = await instanceIds(call);
    assert.deepEqual(
      [...deletedAnswered].filter((id) => left.has(id)),
      [],
      'answered deletions undone by the restart',
    );
    const announcedGone = new Set(
      sink
        .accepted(CALLBACK)
        .filter((notification) => notification.notificationType === 'VnfIdentifierDeletionNotification')
        .map((notification) => notification.vnfInstanceId),
    );
    assert.deepEqual(
      [...there].filter((id) => !left.has(id) && !announcedGone.has(id)),
      [],
      'instances whose deletion was never announced',
    );
    for (const id of left) {
      const deleted = await call('DELETE', `/vnflcm/v2/vnf_instances/${id}`);
      assert.equal(deleted.status, 204, deleted.text);
    }
    // A take the kills cut off before its instance was written counted an instance that never was,
    // and a release they cut off after its instance was deleted left one counted: the next start's
    // reconciliation finds the count no instance backs and zeroes it, so that the package can be
    // disabled and deleted.
    await vnfm.stop();
    vnfm = await startVnfm({ dataDir, processGroup: true });
    call = client(vnfm);
    const pkgNow = await packageRecord(vnfm, pkg.id);
    assert.deepEqual([pkgNow?.usageState, pkgNow?.instanceCount], ['NOT_IN_USE', 0]);
    const disabled = await call('PATCH', `/vnfpkgm/v2/vnf_packages/${pkg.id}`, { body: { operationalState: 'DISABLED' } });
    assert.equal(disabled.status, 200, disabled.text);
    const gone = await call('DELETE', `/vnfpkgm/v2/vnf_packages/${pkg.id}`);
    assert.equal(gone.status, 204, gone.text);
  } finally {
    await vnfm.stop();
    await sink.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
});
