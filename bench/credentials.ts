// Client authentication under attack: the p50 of an unrelated GET /vnflcm/api_versions while 40
// wrong-secret token requests are kept in flight (half for a client id that exists, half for ids
// that do not), beside the same figure idle; and what the token endpoint's answers cost for known
// and unknown ids. The failure limit is raised for the run, so every request reaches the hash.
import { adminCredentials, startVnfm } from '../test/support/runtime.ts';
import { median, summary } from './stats.ts';

const ATTACKERS = Number(process.env.BENCH_CREDENTIALS_ATTACKERS ?? 40);
const SAMPLES = Number(process.env.BENCH_CREDENTIALS_SAMPLES ?? 200);

async function timed(run: () => Promise<Response>): Promise<{ ms: number; status: number }> {
  const started = performance.now();
  const response = await run();
  await response.arrayBuffer();
  return { ms: performance.now() - started, status: response.status };
}

export async function benchCredentials(): Promise<void> {
  const vnfm = await startVnfm({ env: { VNFM_PARAMETER_OVERRIDES: 'LogLevel=warn', AUTH_FAILURE_LIMIT: '1000000000/60' } });
  try {
    const { tokenUrl, clientId } = adminCredentials(vnfm);
    const versions = () => timed(() => fetch(`${vnfm.url}/vnflcm/api_versions`));
    const wrongSecret = (id: string) =>
      timed(() =>
        fetch(tokenUrl, {
          method: 'POST',
          headers: { Authorization: `Basic ${Buffer.from(`${id}:not-the-secret`).toString('base64')}`, 'Content-Type': 'application/x-www-form-urlencoded' },
          body: 'grant_type=client_credentials',
        }),
      );
    for (let i = 0; i < 50; i += 1) await versions(); // warm-up
    const idle: number[] = [];
    for (let i = 0; i < SAMPLES; i += 1) idle.push((await versions()).ms);

    const answers = { known: [] as number[], unknown: [] as number[], statuses: new Map<number, number>() };
    let attacking = true;
    const attackers = Array.from({ length: ATTACKERS }, async (_, n) => {
      const known = n % 2 === 0;
      for (let i = 0; attacking; i += 1) {
        const { ms, status } = await wrongSecret(known ? clientId : `no-such-client-${n}-${i}`);
        (known ? answers.known : answers.unknown).push(ms);
        answers.statuses.set(status, (answers.statuses.get(status) ?? 0) + 1);
      }
    });
    const loaded: number[] = [];
    for (let i = 0; i < SAMPLES; i += 1) loaded.push((await versions()).ms);
    attacking = false;
    await Promise.all(attackers);

    const p50 = (samples: number[]) => median(samples).toFixed(1);
    const statuses = [...answers.statuses].map(([status, count]) => `${count}x${status}`).join(' ');
    console.log(`GET  /vnflcm/api_versions, idle                        ${summary(idle)}`);
    console.log(
      `GET  /vnflcm/api_versions, ${ATTACKERS} wrong-secret token requests in flight   ${summary(loaded)}   (target p50 < 100 ms; was 1631 ms with scrypt on the event loop)`,
    );
    console.log(
      `POST /oauth2/token wrong secret under that load: known id p50 ${p50(answers.known)} ms (n=${answers.known.length}), unknown id p50 ${p50(answers.unknown)} ms (n=${answers.unknown.length}); answers ${statuses}`,
    );
  } finally {
    await vnfm.stop();
  }
}
