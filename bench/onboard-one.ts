// Benchmark helper: onboards one package in a process of its own (as the onboarding Lambda
// would), against the local runtime's stand-ins, and reports its time and peak memory.
import { coreDeps } from '#lib/deps.ts';
import { onboardPackage } from '#lib/packages/onboarding.ts';

const packageId = process.argv[2] ?? '';
const started = performance.now();
const outcome = await onboardPackage(coreDeps(), packageId);
const seconds = (performance.now() - started) / 1000;
process.stdout.write(`${JSON.stringify({ outcome, seconds, maxRssMiB: process.resourceUsage().maxRSS / 1024 })}\n`);
