// Bundles a function of template.yaml with esbuild the way `sam build` does it, from its
// Metadata.BuildProperties (the test that every function bundles, and `npm run bench` for sizes and init times).
import { join } from 'node:path';
import { build, type BuildResult, type OutputFile } from 'esbuild';
import { loadTemplate } from '#local/template.ts';
import { ROOT } from './runtime.ts';
import { buildConsole } from '#local/console-build.ts';

export interface SamBuildProperties {
  EntryPoints: string[];
  Target: string;
  Format: 'esm';
  Minify?: boolean;
  Sourcemap?: boolean;
  MainFields?: string;
  External?: string[];
  OutExtension?: string[];
  Banner: string[];
}

export interface SamFunction {
  logicalId: string;
  handler: string;
  props: SamBuildProperties;
}

/** Every AWS::Serverless::Function of template.yaml with its handler and build properties. */
export function samFunctions(): SamFunction[] {
  const template = loadTemplate(join(ROOT, 'template.yaml'));
  return Object.entries(template.Resources)
    .filter(([, resource]) => resource.Type === 'AWS::Serverless::Function')
    .map(([logicalId, resource]) => ({
      logicalId,
      handler: String((resource.Properties as { Handler: string }).Handler),
      props: (resource.Metadata as { BuildProperties: SamBuildProperties }).BuildProperties,
    }));
}

export interface SamBundle {
  result: BuildResult<{ metafile: true; write: false }>;
  /** The files sam build would put in the function's zip (the .mjs, and a .map when Sourcemap is on). */
  files: OutputFile[];
  /** The handler module. */
  js: OutputFile;
}

/**
 * The function bundled as sam build does (esbuild's defaults where SAM's are the same: Minify and
 * Sourcemap as given). `root`: the project copy to build in, with its symlinks kept as paths (the
 * production install of test/unit/sam-build.test.ts); the repository itself by default.
 */
export async function samBuild(fn: SamFunction, root = ROOT): Promise<SamBundle> {
  const { props } = fn;
  // The console function embeds the console built from this checkout's console/, as `npm run build-console` leaves it for sam build.
  if (fn.logicalId === 'ConsoleFunction') await buildConsole();
  const outExtension = Object.fromEntries((props.OutExtension ?? []).map((entry) => entry.split('=') as [string, string]));
  const result = await build({
    absWorkingDir: root,
    preserveSymlinks: root !== ROOT,
    entryPoints: props.EntryPoints,
    bundle: true,
    platform: 'node',
    format: props.Format,
    target: props.Target,
    minify: props.Minify ?? true,
    sourcemap: props.Sourcemap ?? false,
    ...(props.MainFields ? { mainFields: props.MainFields.split(',') } : {}),
    external: props.External ?? [],
    outExtension,
    outdir: join(root, '.aws-sam', 'build', fn.logicalId),
    banner: { js: (props.Banner[0] ?? '').replace(/^js=/, '') },
    write: false,
    logLevel: 'silent',
    metafile: true,
  });
  const js = result.outputFiles.find((file) => /\.m?js$/.test(file.path));
  if (!js) throw new Error(`${fn.logicalId}: esbuild wrote no JavaScript`);
  return { result, files: result.outputFiles, js };
}
