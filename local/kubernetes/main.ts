// Runs the Kubernetes simulator on its own: `node --import tsx local/kubernetes/main.ts`.
// PORT (default 0: any free port), HOST (default 127.0.0.1), TIME_SCALE (default 1), TOKEN and
// NODES (how many simulated nodes; default 2) from the environment; prints one line with the API
// server URL and the bearer token.
import { startKubernetesSimulator } from './simulator.ts';

const verbose = process.env.SIM_LOG === '1';
const sim = await startKubernetesSimulator({
  port: Number(process.env.PORT ?? 0),
  host: process.env.HOST ?? '127.0.0.1',
  timeScale: Number(process.env.TIME_SCALE ?? 1),
  ...(process.env.TOKEN ? { token: process.env.TOKEN } : {}),
  ...(process.env.NODES ? { nodes: Number(process.env.NODES) } : {}),
  ...(verbose ? { log: (line: string) => process.stderr.write(`${line}\n`) } : {}),
});
process.stdout.write(`Kubernetes simulator: server=${sim.url} token=${sim.token}\n`);

const stop = () => {
  sim.close().then(
    () => process.exit(0),
    () => process.exit(1),
  );
};
process.on('SIGINT', stop);
process.on('SIGTERM', stop);
