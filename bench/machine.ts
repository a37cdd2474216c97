// The machine's own speed at the time of a bench, by two fixed workloads that involve no code of the
// product: JSON (parse and stringify of a ~50 KB document shaped like a page of 100 instances: CPU)
// and a loopback HTTP round trip (node:http, keep-alive: the system calls and thread wake-ups a
// request between the runtime's threads costs). On a shared VM both change from hour to hour, by
// more than the product's figures change between two commits: a bench's figures are comparable
// with another run's only beside these.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { median } from './stats.ts';

export interface MachineSpeed {
  /** JSON.parse + JSON.stringify of the document, median ms. */
  jsonMs: number;
  /** One HTTP request and its answer over loopback, median ms. */
  loopbackMs: number;
}

const DOCUMENT = JSON.stringify(
  Array.from({ length: 100 }, (_, n) => ({
    id: `00000000-0000-4000-8000-${String(n).padStart(12, '0')}`,
    vnfInstanceName: `bench-${n}`,
    vnfdId: 'b1bb0ce7-ebca-4fa7-95ed-4840d70a1177',
    vnfProvider: 'Company',
    vnfProductName: 'Sample VNF',
    vnfSoftwareVersion: '1.0',
    vnfdVersion: '1.0',
    vnfPkgId: '718e2ba5-2e8c-4b0f-8d4c-8d7b0c6a8f9e',
    instantiationState: 'NOT_INSTANTIATED',
    metadata: { site: 'bench', tier: n % 3 },
    _links: {
      self: { href: `https://vnfm.example/vnflcm/v2/vnf_instances/${n}` },
      instantiate: { href: `https://vnfm.example/vnflcm/v2/vnf_instances/${n}/instantiate` },
    },
  })),
);

export async function machineSpeed(samples = 300): Promise<MachineSpeed> {
  const json: number[] = [];
  for (let i = 0; i < samples; i += 1) {
    const started = performance.now();
    JSON.stringify(JSON.parse(DOCUMENT));
    json.push(performance.now() - started);
  }
  const server = http.createServer((_req, res) => res.end('{}'));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  const { port } = server.address() as AddressInfo;
  const ask = () =>
    new Promise<void>((resolve, reject) => {
      http
        .get({ host: '127.0.0.1', port, path: '/', agent }, (res) => {
          res.resume();
          res.on('end', resolve);
        })
        .on('error', reject);
    });
  const loopback: number[] = [];
  try {
    for (let i = 0; i < samples; i += 1) {
      const started = performance.now();
      await ask();
      loopback.push(performance.now() - started);
    }
  } finally {
    agent.destroy();
    server.close();
  }
  return { jsonMs: Number(median(json).toFixed(3)), loopbackMs: Number(median(loopback).toFixed(3)) };
}
