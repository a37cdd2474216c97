// The local runtime's data folder ($VNFM_DATA_DIR) is checked at start, so a damaged folder is
// named instead of serving an empty or inconsistent product. manifest.json records that the
// folder was initialised, the item count of each table and which credential files exist; it is
// written once the VNFM has started, refreshed while it runs and on a clean stop. At start:
// - before anything opens the data (`checkDataFolder`): the LevelDB files are sound
//   (local/leveldb-check.ts) and there at all if the manifest says there were records; the
//   credential files parse, and are there if the manifest says they were;
// - once the tables exist, before the API listens (`checkRecords`): every ONBOARDED package's
//   files are in the S3 folder (a table with far fewer items than recorded is only a warning).
// Damage refuses the start with one message naming each damaged path and what to do. With
// --repair it does what can safely be done instead, and says what it did: damaged files are moved
// aside (renamed with a timestamp), never deleted.
import { existsSync, renameSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join, relative } from 'node:path';
import { DescribeTableCommand, DynamoDBClient, ListTablesCommand, ScanCommand, UpdateItemCommand, type AttributeValue } from '@aws-sdk/client-dynamodb';
import { levelDbDamage } from './leveldb-check.ts';
import { clientsPath, credentialsPath, DataFileError, isIssuedCredentials, issueAdminCredentials, readClients, readJsonFile, writePrivate } from './oauth2.ts';

const MANIFEST = 'manifest.json';

interface Manifest {
  format: 1;
  initialisedAt: string;
  updatedAt: string;
  /** "running" while a VNFM uses the folder; "stopped" after a clean stop. */
  state: 'running' | 'stopped';
  /** Items per table when last counted. */
  tables: Record<string, number>;
  /** Credential files that existed (paths relative to the data folder). */
  files: string[];
}

interface Damage {
  path: string;
  problem: string;
  /** What --repair does about it; undefined when it cannot be repaired here. */
  repair?: () => Promise<string> | string;
}

/** The start is refused: `message` names each damaged path and what to do. */
export class DataDamageError extends Error {
  constructor(dataDir: string, damage: Damage[]) {
    const lines = damage.map((d) => `  - ${d.path} ${d.problem}${d.repair ? '' : ' (--repair cannot rebuild this: restore it from a backup)'}`);
    super(
      [
        `VNFM refuses to start: its data folder ${dataDir} is damaged.`,
        ...lines,
        `Restore ${dataDir} from a backup, or run "npm start -- --repair" to rebuild what can be rebuilt (it says what it did; damaged files are moved aside, not deleted).`,
      ].join('\n'),
    );
    this.name = 'DataDamageError';
  }
}

function manifestPath(dataDir: string): string {
  return join(dataDir, MANIFEST);
}

function isManifest(value: unknown): value is Manifest {
  const m = value as Partial<Manifest> | null;
  return typeof m === 'object' && m !== null && m.format === 1 && typeof m.tables === 'object' && m.tables !== null && Array.isArray(m.files);
}

function readManifest(dataDir: string): Manifest | undefined {
  const path = manifestPath(dataDir);
  if (!existsSync(path)) return undefined;
  try {
    return readJsonFile(path, isManifest, 'a data folder manifest');
  } catch {
    return undefined; // a damaged manifest is rewritten at this start; it only ever adds checks
  }
}

/** Renames a damaged file or folder to <path>.damaged-<timestamp> and says where it went. */
function moveAside(path: string): string {
  const aside = `${path}.damaged-${new Date().toISOString().replace(/[:.]/g, '-')}`;
  renameSync(path, aside);
  return aside;
}

function refuseOrRepair(dataDir: string, damage: Damage[], repair: boolean, log: (line: string) => void): Promise<void> {
  if (!damage.length) return Promise.resolve();
  if (!repair || damage.some((d) => !d.repair)) return Promise.reject(new DataDamageError(dataDir, damage));
  return damage.reduce(async (previous, d) => {
    await previous;
    log(`repair: ${d.path} ${d.problem}: ${await d.repair?.()}`);
  }, Promise.resolve());
}

/** What `check` throws, or undefined when it passes. */
function damageOf(check: () => unknown): unknown {
  try {
    check();
    return undefined;
  } catch (error) {
    return error;
  }
}

const validCredentials = (path: string) => readJsonFile(path, isIssuedCredentials, '{"clientId", "clientSecret", "tokenUrl"}');

const CREDENTIAL_FILES: Array<{
  path: (dataDir: string) => string;
  check: (dataDir: string, path: string) => Promise<void> | void;
  repair: (dataDir: string, path: string) => Promise<string> | string;
}> = [
  {
    path: clientsPath,
    check: (dataDir) => {
      readClients(dataDir);
    },
    repair: (dataDir, path) => {
      const aside = existsSync(path) ? moveAside(path) : undefined;
      const credentials = issueAdminCredentials(dataDir);
      return `${aside ? `moved aside to ${aside}; ` : ''}a new client store with a new admin client (${credentials.clientId}) whose id and secret are in ${credentialsPath(dataDir)}; other clients are gone: create them again with "npm run clients -- create"`;
    },
  },
  {
    path: credentialsPath,
    check: (_dataDir, path) => {
      validCredentials(path);
    },
    repair: (dataDir, path) => {
      // A new client store (repaired just before) wrote a sound one already.
      if (existsSync(path) && damageOf(() => validCredentials(path)) === undefined) return 'written again with the new client store above';
      const aside = existsSync(path) ? moveAside(path) : undefined;
      const credentials = issueAdminCredentials(dataDir);
      return `${aside ? `moved aside to ${aside}; ` : ''}a new admin client (${credentials.clientId}) whose id and secret are in ${path}`;
    },
  },
];

/**
 * Checks the data folder before anything opens it (LevelDB files, credential files); refuses with
 * a DataDamageError, or with `repair` repairs what it can and logs what it did.
 */
export async function checkDataFolder(dataDir: string, options: { repair: boolean; log: (line: string) => void }): Promise<void> {
  const manifest = readManifest(dataDir);
  const damage: Damage[] = [];
  const dynamoDir = join(dataDir, 'dynamodb');
  const recorded = Object.values(manifest?.tables ?? {}).reduce((a, b) => a + b, 0);
  const hasDatabase = existsSync(join(dynamoDir, 'CURRENT'));
  const startEmpty = () => {
    const aside = existsSync(dynamoDir) ? moveAside(dynamoDir) : undefined;
    return `${aside ? `moved aside to ${aside}; ` : ''}the tables start empty: the ${recorded || 'earlier'} records are lost (restore the folder from a backup to get them back)`;
  };
  if (manifest && !hasDatabase) {
    damage.push({
      path: dynamoDir,
      problem: `is ${existsSync(dynamoDir) ? 'empty' : 'missing'}, but ${manifestPath(dataDir)} records ${recorded} items in ${Object.keys(manifest.tables).length} tables`,
      repair: startEmpty,
    });
  } else if (hasDatabase) {
    const found = levelDbDamage(dynamoDir);
    for (const line of found)
      damage.push({ path: line.split(' ')[0] as string, problem: line.slice(line.indexOf(' ') + 1), repair: damage.length ? () => 'see above' : startEmpty });
    if (!found.length) {
      const problem = await levelDbOpenError(dynamoDir);
      if (problem) damage.push({ path: dynamoDir, problem: `cannot be opened: ${problem}`, repair: problem.includes('LOCK') ? undefined : startEmpty });
    }
  }
  for (const file of CREDENTIAL_FILES) {
    const path = file.path(dataDir);
    const problem = !existsSync(path)
      ? manifest?.files.includes(relative(dataDir, path))
        ? 'is missing, but the data folder had it'
        : undefined
      : await Promise.resolve()
          .then(() => file.check(dataDir, path))
          .then(
            () => undefined,
            (error: unknown) => (error instanceof DataFileError ? error.message.slice(path.length + 1).split(';')[0] : String(error)),
          );
    if (problem) damage.push({ path, problem, repair: () => file.repair(dataDir, path) });
  }
  await refuseOrRepair(dataDir, damage, options.repair, options.log);
}

/** Why dynalite's LevelDB library cannot open the folder (another VNFM holding its lock, say), if it cannot. */
async function levelDbOpenError(dir: string): Promise<string | undefined> {
  // The very library dynalite opens it with.
  const { Level } = createRequire(createRequire(import.meta.url).resolve('dynalite'))('level') as {
    Level: new (path: string, options: object) => { open(): Promise<void>; close(): Promise<void> };
  };
  const db = new Level(dir, { createIfMissing: false });
  try {
    await db.open();
    await db.close();
    return undefined;
  } catch (error) {
    const cause = (error as { cause?: Error }).cause;
    return `${(error as Error).message}${cause ? ` (${cause.message})` : ''}`;
  }
}

let dynamo: DynamoDBClient | undefined;
const client = () => (dynamo ??= new DynamoDBClient({}));

/**
 * Items per table: the local DynamoDB counts each table's items as it opens and keeps the count with
 * every write (local/dynalite-tuning.ts), and DescribeTable answers it. (A Scan of every table, as
 * this was, read every item: ~2-3 s of the stand-ins' thread at 100,000 instances and op occs, every
 * 5 minutes, with the API's requests waiting behind each page.)
 */
async function tableCounts(): Promise<Record<string, number>> {
  const counts: Record<string, number> = {};
  for (const table of (await client().send(new ListTablesCommand({}))).TableNames ?? []) {
    const { Table } = await client().send(new DescribeTableCommand({ TableName: table }));
    counts[table] = Table?.ItemCount ?? 0;
  }
  return counts;
}

/** Far fewer: none left of some, or fewer than half. */
const farFewer = (now: number, recorded: number) => (recorded > 0 && now === 0) || now < recorded / 2;

/**
 * Checks the records once the stand-ins run and before the API listens: the S3 files of every
 * ONBOARDED package (refused when missing), and table item counts against the manifest. Counts
 * only warn: an operator's own deletions since the last count (up to 5 minutes before a crash)
 * look the same as lost records, and a VNFM that refuses to start after a legitimate DELETE is
 * worse than one that says what it sees; damaged database files are refused by checkDataFolder.
 */
export async function checkRecords(dataDir: string, options: { repair: boolean; log: (line: string) => void }): Promise<void> {
  const manifest = readManifest(dataDir);
  const damage: Damage[] = [];
  const counts = await tableCounts();
  for (const [table, recorded] of Object.entries(manifest?.tables ?? {})) {
    const now = counts[table];
    if (now === undefined || !farFewer(now, recorded)) continue;
    options.log(
      `WARNING: ${join(dataDir, 'dynamodb')} holds ${now} items in ${table} where ${manifestPath(dataDir)} recorded ${recorded} when last counted: records deleted since, or lost (restore ${dataDir} from a backup if they were not deleted)`,
    );
  }
  const packagesTable = process.env.VNF_PACKAGES_TABLE;
  if (packagesTable) damage.push(...(await lostPackages(dataDir, packagesTable)));
  await refuseOrRepair(dataDir, damage, options.repair, options.log);
}

async function lostPackages(dataDir: string, table: string): Promise<Damage[]> {
  // Imported only now: lib/ reads the environment the runtime has just set up for the handlers.
  const { bucket, contentKey, objectSize, onboardedKey } = await import('#lib/packages/storage.ts');
  const { PARSED_VNFD_FILE } = await import('#lib/packages/onboarding.ts');
  const { INDEX_FILE } = await import('#lib/packages/content.ts');
  const { vnfPackageListKeys } = await import('#lib/store/packages.ts');
  const damage: Damage[] = [];
  let start: Record<string, AttributeValue> | undefined;
  do {
    // Onboarding records the stored content's size; a record without one (written straight into
    // the table, as test fixtures do) claims no files to look for.
    const page = await client().send(
      new ScanCommand({
        TableName: table,
        ExclusiveStartKey: start,
        FilterExpression: 'onboardingState = :onboarded AND attribute_exists(contentSize)',
        ExpressionAttributeValues: { ':onboarded': { S: 'ONBOARDED' } },
      }),
    );
    for (const item of page.Items ?? []) {
      const id = item.id?.S as string;
      const keys = [contentKey(id), onboardedKey(id, PARSED_VNFD_FILE), onboardedKey(id, INDEX_FILE)];
      const missing: string[] = [];
      for (const key of keys) if ((await objectSize(key)) === undefined) missing.push(key);
      if (!missing.length) continue;
      const inUse = item.usageState?.S === 'IN_USE' || Number(item.instanceCount?.N ?? 0) > 0;
      damage.push({
        path: join(dataDir, 's3', bucket(), 'packages', id),
        problem: `lacks ${missing.map((key) => key.slice(`packages/${id}/`.length)).join(', ')} of ONBOARDED VNF package ${id}`,
        repair: inUse
          ? undefined
          : async () => {
              // The package's list index keys move with its states (lib/store/packages.ts); a record
              // without a tenant (none is) has no keys.
              const keys = vnfPackageListKeys({ id, tenantId: item.tenantId?.S, onboardingState: 'CREATED', operationalState: 'DISABLED' });
              const moved = typeof keys.onboardingStateKey === 'string' && typeof keys.operationalStateKey === 'string';
              await client().send(
                new UpdateItemCommand({
                  TableName: table,
                  Key: { id: { S: id } },
                  UpdateExpression: `SET onboardingState = :created, operationalState = :disabled, onboardingFailureDetails = :problem, stateSince = :now${moved ? ', onboardingStateKey = :ok, operationalStateKey = :opk' : ''}`,
                  ExpressionAttributeValues: {
                    ':created': { S: 'CREATED' },
                    ':disabled': { S: 'DISABLED' },
                    ...(moved && { ':ok': { S: keys.onboardingStateKey as string }, ':opk': { S: keys.operationalStateKey as string } }),
                    ':now': { S: new Date().toISOString() },
                    ':problem': {
                      M: {
                        title: { S: 'VNF package content lost' },
                        status: { N: '500' },
                        detail: {
                          S: `The package's stored files (${missing.join(', ')}) were missing when the VNFM started; upload the package content again`,
                        },
                      },
                    },
                  },
                }),
              );
              return `VNF package ${id} is back to CREATED (onboardingFailureDetails names the lost files): upload its content again`;
            },
      });
    }
    start = page.LastEvaluatedKey;
  } while (start);
  return damage;
}

/** Records the folder's state in manifest.json: table counts and the credential files present. */
export async function recordDataFolder(dataDir: string, state: Manifest['state']): Promise<void> {
  const previous = readManifest(dataDir);
  const now = new Date().toISOString();
  const manifest: Manifest = {
    format: 1,
    initialisedAt: previous?.initialisedAt ?? now,
    updatedAt: now,
    state,
    tables: await tableCounts(),
    files: CREDENTIAL_FILES.map((f) => f.path(dataDir))
      .filter((path) => existsSync(path))
      .map((path) => relative(dataDir, path)),
  };
  // Written aside and renamed into place, as the credential files are: a kill mid-write would leave
  // a torn manifest, which the next start reads as none, losing the counts it checks against.
  writePrivate(manifestPath(dataDir), `${JSON.stringify(manifest, null, 2)}\n`);
}
