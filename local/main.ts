// `npm start`: the whole VNF manager on this machine. Configuration by environment:
// PORT (default 9890, Tacker's), HOST (default 127.0.0.1), VNFM_DATA_DIR (default ./.vnfm),
// VNFM_PARAMETER_OVERRIDES ("Key=Value Key=Value", template parameters as sam deploy takes them;
// EgressAllowPrivateNetworks defaults to true here). `npm start -- --repair` repairs a damaged data
// folder as far as it safely can, instead of refusing to start (local/data-check.ts). VNFM_METER=1
// counts what AWS would bill (local/metering.ts).
import { resolve } from 'node:path';
import { startRuntime, type Runtime } from './runtime.ts';
import { checkDataFolder, checkRecords, DataDamageError, recordDataFolder } from './data-check.ts';
import { DataFileError } from './oauth2.ts';
import { startLocalVims } from './vims.ts';
import { guardProcess, letGoOfLostOutput } from './http-guard.ts';
import { meterLogs, usage } from './metering.ts';
import { releaseTranspiler } from './transpiler.ts';

// An output that goes away (a closed terminal, an ended pipe) ends neither the serving nor a stop.
letGoOfLostOutput();
const log = (line: string) => process.stderr.write(`${line}\n`);
// Once serving, whatever a request or a background task throws is logged with its request id and the VNFM goes on.
let serving = false;
guardProcess(log, () => serving);

// VNFM_METER=1 counts what AWS would bill for (`npm run cost` reads it from GET /_local/usage).
if (process.env.VNFM_METER === '1') {
  usage.enabled = true;
  meterLogs();
}

const dataDir = resolve(process.env.VNFM_DATA_DIR ?? '.vnfm');
const parameters = {
  // On one machine the NFVO, its token endpoint and package servers are on loopback or the LAN.
  EgressAllowPrivateNetworks: 'true',
  ...Object.fromEntries(
    (process.env.VNFM_PARAMETER_OVERRIDES ?? '')
      .split(/\s+/)
      .filter(Boolean)
      .map((pair) => {
        const at = pair.indexOf('=');
        if (at < 1) throw new Error(`VNFM_PARAMETER_OVERRIDES: "${pair}" is not Key=Value`);
        return [pair.slice(0, at), pair.slice(at + 1)];
      }),
  ),
};
const repair = process.argv.includes('--repair');
let runtime: Runtime;
try {
  // A damaged data folder is named and the start refused, rather than serving an empty or older product.
  await checkDataFolder(dataDir, { repair, log });
  runtime = await startRuntime({
    dataDir,
    parameters,
    // Local VIMs run scaled-down timings; Wait states between VIM polls are scaled alike.
    waitScale: Number(process.env.VNFM_WAIT_SCALE ?? 0.2),
    port: Number(process.env.PORT ?? 9890),
    host: process.env.HOST ?? '127.0.0.1',
    checkRecords: () => checkRecords(dataDir, { repair, log }),
    // Interrupted operations resume once their VIMs are back.
    deferResume: true,
  });
} catch (error) {
  if (!(error instanceof DataDamageError || error instanceof DataFileError)) throw error;
  process.stderr.write(`${error.message}\n`);
  process.exit(1);
}
const vims = await startLocalVims(dataDir, {
  timeScale: Number(process.env.VNFM_SIM_TIME_SCALE ?? 0.2),
  // The VNFM prints the one line about where it listens; vims.json says where the VIMs are.
  log: (line) => {
    if (!line.includes('listening on')) process.stderr.write(`${line}\n`);
  },
});
await runtime.resume();
// manifest.json says what the folder held, for the next start's check: now, every few minutes, and at a clean stop.
await recordDataFolder(dataDir, 'running');
const recording = setInterval(
  () => void recordDataFolder(dataDir, 'running').catch((error: unknown) => log(`could not update ${dataDir}/manifest.json: ${String(error)}`)),
  5 * 60_000,
);
recording.unref();
if (repair) log('--repair: done; the data folder is consistent again');
let stopping = false;
const stop = (signal: string) => {
  if (stopping) return;
  stopping = true;
  process.stderr.write(`VNFM stopping (${signal})\n`);
  clearInterval(recording);
  recordDataFolder(dataDir, 'stopped')
    .catch((error: unknown) => log(`could not update ${dataDir}/manifest.json: ${String(error)}`))
    .then(() => vims.close())
    .then(() => runtime.close())
    .then(
      () => process.exit(0),
      (error: unknown) => {
        process.stderr.write(`VNFM stopped with an error: ${String(error)}\n`);
        process.exit(1);
      },
    );
};
process.on('SIGINT', () => stop('SIGINT'));
process.on('SIGTERM', () => stop('SIGTERM'));
// Everything the runtime serves is imported: esbuild's compiling thread can go (local/transpiler.ts).
await releaseTranspiler();
// Announced only once a stop signal would be handled: whoever waits for this line may stop it at once.
serving = true;
process.stdout.write(`VNFM listening on ${runtime.url} (data in ${dataDir}; VIMs in ${dataDir}/vims.json)\n`);
