// `npm start`: the whole VNF manager on this machine. Configuration by environment:
// PORT (default 9890, Tacker's), HOST (default 127.0.0.1), VNFM_DATA_DIR (default ./.vnfm),
// VNFM_PARAMETER_OVERRIDES ("Key=Value Key=Value", template parameters as sam deploy takes them;
// EgressAllowPrivateNetworks defaults to true here).
import { resolve } from 'node:path';
import { startRuntime } from './runtime.ts';
import { startLocalVims } from './vims.ts';
import { guardProcess } from './http-guard.ts';

// Whatever a request or a background task throws is logged with its request id; the VNFM goes on serving.
guardProcess((line) => process.stderr.write(`${line}\n`));

const dataDir = resolve(process.env.VNFM_DATA_DIR ?? '.vnfm');
const parameters = {
  // On one machine the NFVO, its token endpoint and package servers are on loopback or the LAN.
  EgressAllowPrivateNetworks: 'true',
  ...Object.fromEntries((process.env.VNFM_PARAMETER_OVERRIDES ?? '').split(/\s+/).filter(Boolean).map((pair) => {
    const at = pair.indexOf('=');
    if (at < 1) throw new Error(`VNFM_PARAMETER_OVERRIDES: "${pair}" is not Key=Value`);
    return [pair.slice(0, at), pair.slice(at + 1)];
  })),
};
const runtime = await startRuntime({
  dataDir,
  parameters,
  // Local VIMs run scaled-down timings; Wait states between VIM polls are scaled alike.
  waitScale: Number(process.env.VNFM_WAIT_SCALE ?? 0.2),
  port: Number(process.env.PORT ?? 9890),
  host: process.env.HOST ?? '127.0.0.1',
  // Interrupted operations resume once their VIMs are back.
  deferResume: true,
});
const vims = await startLocalVims(dataDir, {
  timeScale: Number(process.env.VNFM_SIM_TIME_SCALE ?? 0.2),
  // The VNFM prints the one line about where it listens; vims.json says where the VIMs are.
  log: (line) => { if (!line.includes('listening on')) process.stderr.write(`${line}\n`); },
});
await runtime.resume();
process.stdout.write(`VNFM listening on ${runtime.url} (data in ${dataDir}; VIMs in ${dataDir}/vims.json)\n`);

let stopping = false;
const stop = (signal: string) => {
  if (stopping) return;
  stopping = true;
  process.stderr.write(`VNFM stopping (${signal})\n`);
  vims.close().then(() => runtime.close()).then(() => process.exit(0), (error: unknown) => {
    process.stderr.write(`VNFM stopped with an error: ${String(error)}\n`);
    process.exit(1);
  });
};
process.on('SIGINT', () => stop('SIGINT'));
process.on('SIGTERM', () => stop('SIGTERM'));
