// BullMQ as a benchmark peer (see ../../PROTOCOL.md), through BullMQ's public API the way an application uses it:
// Queue.addBulk / Queue.add to produce, a Worker with a no-op async processor to consume.
//
//   node peer.mjs <workload> --host H --port P [--messages N] [--concurrency C] [--seconds S]
//
// Job options: BullMQ's defaults everywhere, in every workload (no removeOnComplete / removeOnFail, no attempts,
// no custom job ids). The goal is "a user measuring BullMQ out of the box". Note what the defaults imply: a
// completed job is NOT deleted, its hash stays and its id is moved to the `completed` sorted set, so the consuming
// workloads also pay for (and leave behind) that bookkeeping. The only non-default choices are the ones the protocol
// prescribes: Worker `concurrency` (default 8 here, BullMQ's own default is 1) and `delay` for the delay workload.
//
// Connection: plain ioredis options ({host, port, maxRetriesPerRequest: null}) handed to each Queue/Worker, which
// then create (and on close() quit) their own ioredis connections, as in BullMQ's getting-started docs.

import { Queue, Worker } from 'bullmq';

const QUEUE = 'bench';
const JOB_NAME = 'msg';
const CHUNK = 1000; // jobs per addBulk call, and queue.add calls per awaited window
// Same 80-character filler as the RMQ peer (PeerArgs.FILLER): data = {id, body}, about 100 bytes of JSON.
const FILLER = 'lorem-ipsum-dolor-sit-amet-consectetur-adipiscing-elit-sed-do-eiusmod-tempor-inc';

function parseArgs(argv) {
  const workload = argv[0];
  if (!workload) {
    throw new Error('usage: node peer.mjs <workload> --host H --port P [--messages N] [--concurrency C] [--seconds S]');
  }
  const opts = {};
  for (let i = 1; i + 1 < argv.length; i += 2) {
    opts[argv[i].replace(/^--/, '')] = argv[i + 1];
  }
  const int = (name, dflt) => {
    const v = opts[name] === undefined ? dflt : Number.parseInt(opts[name], 10);
    if (!Number.isFinite(v)) throw new Error(`bad --${name}: ${opts[name]}`);
    return v;
  };
  return {
    workload,
    host: opts.host ?? '127.0.0.1',
    port: int('port', 6379),
    messages: int('messages', workload === 'delay' ? 10_000 : 200_000),
    concurrency: int('concurrency', 8),
    seconds: int('seconds', workload === 'delay' ? 10 : workload === 'idle' ? 12 : 120),
  };
}

const args = parseArgs(process.argv.slice(2));
const connection = { host: args.host, port: args.port, maxRetriesPerRequest: null };

const log = (...parts) => console.error('[bullmq-peer]', ...parts);
const sleep = ms => new Promise(resolve => setTimeout(resolve, ms));
const data = i => ({ id: i, body: FILLER });

function newQueue() {
  const queue = new Queue(QUEUE, { connection });
  queue.on('error', err => log('queue error:', err?.message ?? err));
  return queue;
}

/**
 * A Worker with a no-op async processor. Counts 'completed' events (emitted once BullMQ has moved the job to
 * completed in Redis) and resolves `done` at the target count. `onProcess` runs inside the processor.
 */
function newWorker(target, onProcess) {
  let handled = 0;
  let resolveDone;
  const done = new Promise(resolve => (resolveDone = resolve));
  const worker = new Worker(
    QUEUE,
    async job => {
      if (onProcess) onProcess(job);
    },
    { connection, concurrency: args.concurrency },
  );
  worker.on('completed', () => {
    handled += 1;
    if (handled === target) resolveDone(process.hrtime.bigint());
  });
  worker.on('failed', (job, err) => log('job failed:', job?.id, err?.message ?? err));
  worker.on('error', err => log('worker error:', err?.message ?? err));
  return { worker, done, handled: () => handled };
}

/** Resolves with `null` after ms (for "until N are handled or --seconds pass"). */
const timeout = ms => {
  let timer;
  const promise = new Promise(resolve => (timer = setTimeout(() => resolve(null), ms)));
  return { promise, cancel: () => clearTimeout(timer) };
};

const secondsSince = start => Number(process.hrtime.bigint() - start) / 1e9;
const rateResult = (count, seconds) => ({ rate: Math.round((count / seconds) * 10) / 10, count });

/** addBulk in chunks of CHUNK, one call awaited after another. */
async function addBulk(queue, n) {
  for (let from = 0; from < n; from += CHUNK) {
    const to = Math.min(n, from + CHUNK);
    const jobs = [];
    for (let i = from; i < to; i++) jobs.push({ name: JOB_NAME, data: data(i) });
    await queue.addBulk(jobs);
  }
}

/** One queue.add per message, issued without awaiting each; windows of CHUNK awaited with Promise.all. */
async function addSingle(queue, n) {
  for (let from = 0; from < n; from += CHUNK) {
    const to = Math.min(n, from + CHUNK);
    const window = [];
    for (let i = from; i < to; i++) window.push(queue.add(JOB_NAME, data(i)));
    await Promise.all(window);
  }
}

async function produceBatch() {
  const queue = newQueue();
  await queue.waitUntilReady();
  const start = process.hrtime.bigint();
  await addBulk(queue, args.messages);
  const elapsed = secondsSince(start);
  await queue.close();
  return rateResult(args.messages, elapsed);
}

async function produceSingle() {
  const queue = newQueue();
  await queue.waitUntilReady();
  const start = process.hrtime.bigint();
  await addSingle(queue, args.messages);
  const elapsed = secondsSince(start);
  await queue.close();
  return rateResult(args.messages, elapsed);
}

async function fill() {
  const queue = newQueue();
  await queue.waitUntilReady();
  await addBulk(queue, args.messages);
  await queue.close();
  return { count: args.messages };
}

async function consume() {
  const start = process.hrtime.bigint(); // elapsed includes the worker's startup
  const w = newWorker(args.messages);
  const limit = timeout(args.seconds * 1000);
  const end = await Promise.race([w.done, limit.promise]);
  limit.cancel();
  const count = w.handled();
  const elapsed = Number((end ?? process.hrtime.bigint()) - start) / 1e9;
  await w.worker.close();
  return rateResult(count, elapsed);
}

async function produceConsume() {
  const w = newWorker(args.messages);
  const queue = newQueue();
  await Promise.all([w.worker.waitUntilReady(), queue.waitUntilReady()]);
  const start = process.hrtime.bigint(); // first send
  const limit = timeout(args.seconds * 1000);
  await addSingle(queue, args.messages);
  const end = await Promise.race([w.done, limit.promise]);
  limit.cancel();
  const count = w.handled();
  const elapsed = Number((end ?? process.hrtime.bigint()) - start) / 1e9;
  await w.worker.close();
  await queue.close();
  return rateResult(count, elapsed);
}

function percentile(sorted, p) {
  if (sorted.length === 0) return -1;
  const rank = Math.ceil((p / 100) * sorted.length); // nearest rank
  return sorted[Math.max(0, rank - 1)];
}

async function delay() {
  const n = args.messages;
  const lateness = [];
  const w = newWorker(n, job => {
    lateness.push(Date.now() - job.data.due);
  });
  const queue = newQueue();
  await Promise.all([w.worker.waitUntilReady(), queue.waitUntilReady()]);
  // Due times spread uniformly over --seconds, starting 1 s from now (PROTOCOL.md, as every peer). Sent with
  // addBulk in chunks; each job's `delay` is computed just before its chunk is sent.
  const base = Date.now() + 1000;
  const spread = args.seconds * 1000;
  const limit = timeout((2 * args.seconds + 30) * 1000);
  for (let from = 0; from < n; from += CHUNK) {
    const to = Math.min(n, from + CHUNK);
    const now = Date.now();
    const jobs = [];
    for (let i = from; i < to; i++) {
      const due = base + Math.floor((spread * i) / n);
      jobs.push({ name: JOB_NAME, data: { id: i, due }, opts: { delay: Math.max(0, due - now) } });
    }
    await queue.addBulk(jobs);
  }
  log(`sent ${n} delayed jobs in ${Date.now() - base + 1000} ms`);
  await Promise.race([w.done, limit.promise]);
  limit.cancel();
  await w.worker.close();
  await queue.close();
  const got = lateness.slice(0, n).sort((a, b) => a - b);
  return {
    p50: percentile(got, 50),
    p99: percentile(got, 99),
    max: got.length ? got[got.length - 1] : -1,
    count: Math.min(n, w.handled()),
  };
}

async function idle() {
  const w = newWorker(Infinity);
  await w.worker.waitUntilReady();
  await sleep(300); // let the worker reach its blocking wait, as the RMQ peer does
  console.log('READY');
  await sleep(args.seconds * 1000);
  await w.worker.close();
  return { count: 0 };
}

const workloads = {
  'produce-batch': produceBatch,
  'produce-single': produceSingle,
  consume,
  'produce-consume': produceConsume,
  fill,
  delay,
  idle,
};

async function main() {
  const run = workloads[args.workload];
  if (!run) throw new Error(`unknown workload ${args.workload}`);
  const result = await run();
  console.log('RESULT ' + JSON.stringify(result));
}

main().then(
  () => {
    process.exitCode = 0;
  },
  err => {
    console.error(err?.stack ?? err);
    process.exit(1);
  },
);
