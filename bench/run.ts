// `npm run bench`: every benchmark in turn. The first (bench/instances.ts) creates BENCH_INSTANCES
// (default 100,000) VNF instances and as many op occs in the local runtime and times creates, list
// pages, index-backed filtered pages and the runtime's memory beside the targets and Tacker's figures.
// BENCH_INSTANCES, BENCH_SEQUENTIAL, BENCH_CONCURRENCY and BENCH_LIST_SAMPLES change its sizes;
// BENCH_ONLY=instances, onboarding, downloads, lcm, operations, notifications, health, pm, credentials, soak, bundles or list-filters runs one part.
// BENCH_OP_OCCS sets how many op occs (and VNF instances) the filtered lists of list-filters read among.
import { SETTLE_LIMIT } from '../test/support/runtime.ts';
import { benchInstances } from './instances.ts';
import { benchOnboarding } from './onboarding.ts';
import { benchDownloads } from './downloads.ts';
import { benchLcm } from './lcm.ts';
import { benchLcmOperations } from './lcm-operations.ts';
import { benchNotifications } from './notifications.ts';
import { benchHealth } from './health.ts';
import { benchPm } from './pm.ts';
import { benchSoak } from './soak.ts';
import { benchCredentials } from './credentials.ts';
import { benchBundles } from './bundles.ts';
import { benchListFilters } from './list-filters.ts';

// A bench settles after thousands of operations on a machine that may be slow: it waits as long as that takes.
SETTLE_LIMIT.ms = Number.POSITIVE_INFINITY;

if (!process.env.BENCH_ONLY || process.env.BENCH_ONLY === 'instances') await benchInstances();
if (!process.env.BENCH_ONLY || process.env.BENCH_ONLY === 'onboarding') await benchOnboarding();
if (!process.env.BENCH_ONLY || process.env.BENCH_ONLY === 'downloads') await benchDownloads();
if (!process.env.BENCH_ONLY || process.env.BENCH_ONLY === 'lcm') await benchLcm();
if (!process.env.BENCH_ONLY || process.env.BENCH_ONLY === 'lcm' || process.env.BENCH_ONLY === 'operations') await benchLcmOperations();
if (!process.env.BENCH_ONLY || process.env.BENCH_ONLY === 'notifications') await benchNotifications();
if (!process.env.BENCH_ONLY || process.env.BENCH_ONLY === 'health') await benchHealth();
if (!process.env.BENCH_ONLY || process.env.BENCH_ONLY === 'pm') await benchPm();
if (!process.env.BENCH_ONLY || process.env.BENCH_ONLY === 'credentials') await benchCredentials();
if (!process.env.BENCH_ONLY || process.env.BENCH_ONLY === 'soak') await benchSoak();
if (!process.env.BENCH_ONLY || process.env.BENCH_ONLY === 'bundles') await benchBundles();
if (!process.env.BENCH_ONLY || process.env.BENCH_ONLY === 'list-filters') await benchListFilters();
