// `vnfm package ...`: SOL005 VNF packages. An upload creates the package, sends the CSAR (a PUT of
// package_content up to the API's 4 MiB body limit, the presigned upload URL beyond it) and waits
// until onboarding has ONBOARDED it or said why not.
import { statSync } from 'node:fs';
import { type Command, Option } from 'commander';
import { SingleBar } from 'cli-progress';
import { ApiError, CliError, parseJson, type VnfmClient } from '../client.ts';
import { clientFor, print, showCommand, printList, readCommand } from '../context.ts';
import { readObject } from '../input.ts';
import { elapsed, type Column } from '../output.ts';
import { pollIntervalMs } from '../wait.ts';
import { putFile } from '../upload.ts';

const PACKAGES = '/vnfpkgm/v2/vnf_packages';
/** The largest CSAR the API takes in the request body (API Gateway and Lambda carry a few MiB). */
export const MAX_DIRECT_UPLOAD_BYTES = 4 * 1024 * 1024;

export interface VnfPkgInfo {
  id: string;
  vnfdId?: string;
  vnfProvider?: string;
  vnfProductName?: string;
  vnfSoftwareVersion?: string;
  onboardingState: string;
  operationalState: string;
  usageState: string;
  onboardingFailureDetails?: Record<string, unknown>;
}

export const PACKAGE_COLUMNS: readonly Column<VnfPkgInfo>[] = [
  { header: 'ID', value: (p) => p.id },
  { header: 'VNFD ID', value: (p) => p.vnfdId },
  { header: 'Product', value: (p) => [p.vnfProvider, p.vnfProductName].filter(Boolean).join(' ') },
  { header: 'Version', value: (p) => p.vnfSoftwareVersion },
  { header: 'Onboarding', value: (p) => p.onboardingState },
  { header: 'State', value: (p) => p.operationalState },
  { header: 'Usage', value: (p) => p.usageState },
];

const sleep = (ms: number) => new Promise((resolveSleep) => setTimeout(resolveSleep, ms));

/** Sends the CSAR: directly when the API takes it, else to the presigned URL the API hands out. */
async function sendContent(client: VnfmClient, id: string, file: string, size: number, presigned: boolean): Promise<void> {
  const bar = process.stderr.isTTY ? new SingleBar({ format: 'Uploading [{bar}] {percentage}% {value}/{total} bytes', stream: process.stderr }) : undefined;
  bar?.start(size, 0);
  try {
    let url: string;
    let headers: Record<string, string>;
    if (presigned || size > MAX_DIRECT_UPLOAD_BYTES) {
      const target = (await client.request<{ uploadUri: string; headers?: Record<string, string> }>('POST', `${PACKAGES}/${id}/package_content/upload_url`))
        .body;
      url = target.uploadUri;
      headers = { 'Content-Type': 'application/zip', ...target.headers };
    } else {
      url = client.url(`${PACKAGES}/${id}/package_content`);
      headers = await client.headers(url, { 'Content-Type': 'application/zip' });
    }
    const answer = await putFile(url, file, size, headers, (sent) => bar?.update(sent));
    if (answer.status >= 400) {
      const problem = parseJson(answer.text) as Record<string, unknown> | undefined;
      // S3 answers XML: its Code and Message say enough.
      const s3 = /<Code>([^<]*)<\/Code>[\s\S]*?<Message>([^<]*)<\/Message>/.exec(answer.text);
      throw new ApiError(answer.status, answer.statusText, problem ?? (s3 ? { title: s3[1], detail: s3[2] } : undefined), answer.text);
    }
  } finally {
    bar?.stop();
  }
}

/** Polls the package until ONBOARDED, or until onboarding put it back to CREATED with the reason. */
export async function awaitOnboarding(client: VnfmClient, id: string, startedAt: number): Promise<VnfPkgInfo> {
  let last: string | undefined;
  for (;;) {
    const pkg = (await client.get<VnfPkgInfo>(`${PACKAGES}/${id}`)).body;
    if (pkg.onboardingState !== last) {
      print(`[${elapsed(Date.now() - startedAt)}] ${pkg.onboardingState}`);
      last = pkg.onboardingState;
    }
    if (pkg.onboardingState === 'ONBOARDED') return pkg;
    if (pkg.onboardingState === 'CREATED' && pkg.onboardingFailureDetails) {
      const details = pkg.onboardingFailureDetails;
      throw new CliError(
        `Onboarding of package ${id} failed: ${String(details.detail ?? details.title ?? JSON.stringify(details))}\nFix the package and upload it again: vnfm package upload FILE --package-id ${id}`,
      );
    }
    await sleep(pollIntervalMs());
  }
}

export function packageCommands(program: Command): void {
  const pkg = program.command('package').description('VNF packages (SOL005): upload, list, show, enable, disable, delete');

  pkg
    .command('upload')
    .description('create a VNF package, upload a CSAR to it and wait until it is ONBOARDED')
    .argument('<file>', 'the CSAR (zip)')
    .option('--package-id <id>', 'upload into this existing package (in CREATED) instead of creating one')
    .option('--user-data <file-or-json>', 'userDefinedData of the new package (JSON or YAML file, or inline JSON)')
    .option('--presigned', 'upload through the presigned URL even when the CSAR is small')
    .option('--no-wait', 'return once the CSAR is sent, printing the package id')
    .action(async (file: string, options: { packageId?: string; userData?: string; presigned?: boolean; wait: boolean }, command: Command) => {
      let size: number;
      try {
        size = statSync(file).size;
      } catch {
        throw new CliError(`No file ${file}`);
      }
      const client = clientFor(command);
      const startedAt = Date.now();
      let id = options.packageId;
      if (!id) {
        const body = options.userData ? { userDefinedData: readObject(options.userData, '--user-data') } : {};
        id = (await client.request<VnfPkgInfo>('POST', PACKAGES, { body })).body.id;
        if (options.wait) print(`Package ${id} created`);
      }
      await sendContent(client, id, file, size, options.presigned === true);
      if (!options.wait) {
        print(id);
        return;
      }
      print(`[${elapsed(Date.now() - startedAt)}] uploaded ${size} bytes`);
      const onboarded = await awaitOnboarding(client, id, startedAt);
      print(`Package ${id} is ONBOARDED (${onboarded.operationalState}); VNFD ${onboarded.vnfdId}: vnfm vnf create --vnfd-id ${onboarded.vnfdId}`);
    });

  readCommand(
    pkg.command('list').description('list VNF packages').option('--filter <expression>', 'SOL013 attribute filter, e.g. "(eq,onboardingState,ONBOARDED)"'),
  ).action(async (options: { filter?: string }, command: Command) => {
    await printList(command, PACKAGES, PACKAGE_COLUMNS, { filter: options.filter });
  });

  showCommand(pkg, PACKAGES, 'VNF package');

  for (const [name, state] of [
    ['enable', 'ENABLED'],
    ['disable', 'DISABLED'],
  ] as const) {
    pkg
      .command(name)
      .description(`set a package's operational state to ${state}`)
      .argument('<id>', 'package id')
      .action(async (id: string, _options: unknown, command: Command) => {
        await clientFor(command).request('PATCH', `${PACKAGES}/${id}`, {
          body: { operationalState: state },
          contentType: 'application/merge-patch+json',
        });
        print(`Package ${id} is ${state}`);
      });
  }

  pkg
    .command('delete')
    .description('delete a package (it must be DISABLED and NOT_IN_USE)')
    .argument('<id>', 'package id')
    .addOption(new Option('--disable', 'disable it first if it is ENABLED'))
    .action(async (id: string, options: { disable?: boolean }, command: Command) => {
      const client = clientFor(command);
      if (options.disable) {
        const current = (await client.get<VnfPkgInfo>(`${PACKAGES}/${id}`)).body;
        if (current.operationalState === 'ENABLED')
          await client.request('PATCH', `${PACKAGES}/${id}`, { body: { operationalState: 'DISABLED' }, contentType: 'application/merge-patch+json' });
      }
      await client.request('DELETE', `${PACKAGES}/${id}`);
      print(`Package ${id} deleted`);
    });
}
