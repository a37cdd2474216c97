// Runs the OpenStack simulator on its own: `node --import tsx local/openstack/main.ts`.
// PORT (default 0: any free port), HOST (default 127.0.0.1), TIME_SCALE (default 1) from the
// environment; prints one line with the auth URL and the admin credentials.
import { startOpenStackSimulator } from './simulator.ts';

const verbose = process.env.SIM_LOG === '1';
const sim = await startOpenStackSimulator({
  port: Number(process.env.PORT ?? 0),
  host: process.env.HOST ?? '127.0.0.1',
  timeScale: Number(process.env.TIME_SCALE ?? 1),
  ...(verbose ? { log: (line: string) => process.stderr.write(`${line}\n`) } : {}),
});
const c = sim.credentials;
process.stdout.write(
  `OpenStack simulator: auth_url=${sim.authUrl} username=${c.username} password=${c.password} project=${c.project} project_domain=${c.projectDomain} user_domain=${c.userDomain} region=${c.region}\n`,
);

const stop = () => {
  sim.close().then(
    () => process.exit(0),
    () => process.exit(1),
  );
};
process.on('SIGINT', stop);
process.on('SIGTERM', stop);
