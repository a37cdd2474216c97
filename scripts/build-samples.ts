// Builds every sample VNF package of samples/packages/ into <outDir>/<name>.zip (default
// .vnfm/samples) and prints the zip paths, one a line: `node --import tsx scripts/build-samples.ts [outDir]`.
import { join } from 'node:path';
import { buildCsarFile, SAMPLE_PACKAGE_NAMES } from '../test/support/csar-builder.ts';

const outDir = process.argv[2] ?? join('.vnfm', 'samples');
for (const name of SAMPLE_PACKAGE_NAMES) {
  const { path } = await buildCsarFile(name, join(outDir, `${name}.zip`));
  console.log(path);
}
