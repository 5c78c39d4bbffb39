// BullMQ as a benchmark peer (see ../../PROTOCOL.md), through BullMQ's public API the way an application uses it:
// Queue.addBulk / Queue.add to produce, a Worker with a no-op async processor to consume.
//
//   node peer.mjs <workload> --host H --port P [--messages N] [--concurrency C] [--seconds S] [--warmup-seconds W]
//
// Job options: BullMQ's defaults everywhere, in every workload (no removeOnComplete / removeOnFail, no attempts,
// no custom job ids). The goal is "a user measuring BullMQ out of the box". Note what the defaults imply: a
// completed job is NOT deleted, its hash stays and its id is moved to the `completed` sorted set, so the consuming
// workloads also pay for (and leave behind) that bookkeeping. The only non-default choices are the ones the protocol
// prescribes: Worker `concurrency` (default 8 here, BullMQ's own default is 1) and `delay` for the delay workload.
//
// Connection: plain ioredis options ({host, port, maxRetriesPerRequest: null}) handed to each Queue/Worker, which
// then create (and on close() quit) their own ioredis connections, as in BullMQ's getting-started docs.
//
// Warm-up (--warmup-seconds W, default 0 = none; PROTOCOL.md): before the measured phase, for W seconds the same code
// paths (Worker, addBulk, add, delayed addBulk) run against a separate queue `bench-warmup`, which is then closed and
// obliterated. It only lets V8's JIT compile those paths first; nothing of it is measured. Never for fill and idle.

import { Queue, Worker } from 'bullmq';

const QUEUE = 'bench';
/** The warm-up's own queue (own keys, obliterated before the measured phase). */
const WARMUP_QUEUE = `${QUEUE}-warmup`;
/** Workloads that get a warm-up phase when --warmup-seconds > 0 (never fill and idle). */
const WARMUP_WORKLOADS = new Set(['produce-batch', 'produce-single', 'consume', 'produce-consume', 'delay']);
const WARMUP_ROUND = 1_000; // messages per addBulk and per add phase of a W1 warm-up round
const WARMUP_DELAY_ROUND = 1_000; // delayed jobs per delay warm-up round, due over the next WARMUP_DELAY_SPREAD ms
const WARMUP_DELAY_SPREAD = 1_000;
const JOB_NAME = 'msg';
const CHUNK = 1000; // jobs per addBulk call, and queue.add calls per awaited window
// Same 80-character filler as the RMQ peer (PeerArgs.FILLER): data = {id, body}, about 100 bytes of JSON.
const FILLER = 'lorem-ipsum-dolor-sit-amet-consectetur-adipiscing-elit-sed-do-eiusmod-tempor-inc';

function parseArgs(argv) {
  const workload = argv[0];
  if (!workload) {
    throw new Error(
      'usage: node peer.mjs <workload> --host H --port P [--messages N] [--concurrency C] [--seconds S]' +
        ' [--warmup-seconds W]',
    );
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
    warmupSeconds: int('warmup-seconds', 0),
  };
}

const args = parseArgs(process.argv.slice(2));
const connection = { host: args.host, port: args.port, maxRetriesPerRequest: null };

const log = (...parts) => console.error('[bullmq-peer]', ...parts);
const sleep = ms => new Promise(resolve => setTimeout(resolve, ms));
const data = i => ({ id: i, body: FILLER });

function newQueue(name) {
  const queue = new Queue(name, { connection });
  queue.on('error', err => log('queue error:', err?.message ?? err));
  return queue;
}

/**
 * A Worker on queue `name` with a no-op async processor. Counts 'completed' events (emitted once BullMQ has moved the
 * job to completed in Redis) and resolves `done` at the target count. `onProcess` runs inside the processor.
 */
function newWorker(name, target, onProcess) {
  let handled = 0;
  let resolveDone;
  const done = new Promise(resolve => (resolveDone = resolve));
  const worker = new Worker(
    name,
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

/** The measured phase starts (PROTOCOL.md): the orchestrator reads Redis's CPU and the machine's load from here. */
const measuring = () => process.stdout.write('MEASURING\n');
const secondsSince = start => Number(process.hrtime.bigint() - start) / 1e9;
const nowMs = () => performance.now(); // monotonic, for the warm-up deadline
const rateResult = (count, seconds) => ({ rate: Math.round((count / seconds) * 10) / 10, count });

/**
 * addBulk in chunks of CHUNK, one call awaited after another. Stops early (between chunks) once `deadline`
 * (nowMs() scale; only the warm-up passes one) has passed. Returns the number of jobs sent.
 */
async function addBulk(queue, n, deadline = Infinity) {
  let from = 0;
  for (; from < n && nowMs() < deadline; from += CHUNK) {
    const to = Math.min(n, from + CHUNK);
    const jobs = [];
    for (let i = from; i < to; i++) jobs.push({ name: JOB_NAME, data: data(i) });
    await queue.addBulk(jobs);
  }
  return Math.min(n, from);
}

/**
 * One queue.add per message, issued without awaiting each; windows of CHUNK awaited with Promise.all. Stops early
 * (between windows) once `deadline` has passed, like addBulk. Returns the number of jobs sent.
 */
async function addSingle(queue, n, deadline = Infinity) {
  let from = 0;
  for (; from < n && nowMs() < deadline; from += CHUNK) {
    const to = Math.min(n, from + CHUNK);
    const window = [];
    for (let i = from; i < to; i++) window.push(queue.add(JOB_NAME, data(i)));
    await Promise.all(window);
  }
  return Math.min(n, from);
}

async function produceBatch() {
  const queue = newQueue(QUEUE);
  await queue.waitUntilReady();
  measuring();
  const start = process.hrtime.bigint();
  await addBulk(queue, args.messages);
  const elapsed = secondsSince(start);
  await queue.close();
  return rateResult(args.messages, elapsed);
}

async function produceSingle() {
  const queue = newQueue(QUEUE);
  await queue.waitUntilReady();
  measuring();
  const start = process.hrtime.bigint();
  await addSingle(queue, args.messages);
  const elapsed = secondsSince(start);
  await queue.close();
  return rateResult(args.messages, elapsed);
}

async function fill() {
  const queue = newQueue(QUEUE);
  await queue.waitUntilReady();
  await addBulk(queue, args.messages);
  await queue.close();
  return { count: args.messages };
}

async function consume() {
  measuring();
  const start = process.hrtime.bigint(); // elapsed includes the worker's startup
  const w = newWorker(QUEUE, args.messages);
  const limit = timeout(args.seconds * 1000);
  const end = await Promise.race([w.done, limit.promise]);
  limit.cancel();
  const count = w.handled();
  const elapsed = Number((end ?? process.hrtime.bigint()) - start) / 1e9;
  await w.worker.close();
  return rateResult(count, elapsed);
}

async function produceConsume() {
  const w = newWorker(QUEUE, args.messages);
  const queue = newQueue(QUEUE);
  await Promise.all([w.worker.waitUntilReady(), queue.waitUntilReady()]);
  measuring();
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

/** The delay workload's consumer on queue `name`: a newWorker whose processor records `now - due` (ms). */
function delayWorker(name, target) {
  const lateness = [];
  const w = newWorker(name, target, job => {
    lateness.push(Date.now() - job.data.due);
  });
  return { ...w, lateness };
}

/**
 * Sends n delayed jobs due uniformly over `spread` ms starting at `base` (epoch ms), with addBulk in chunks; each
 * job's `delay` is computed just before its chunk is sent.
 */
async function addDelayed(queue, n, base, spread) {
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
}

async function delay() {
  const n = args.messages;
  const w = delayWorker(QUEUE, n);
  const queue = newQueue(QUEUE);
  await Promise.all([w.worker.waitUntilReady(), queue.waitUntilReady()]);
  measuring();
  // Due times spread uniformly over --seconds, starting 1 s from now (PROTOCOL.md, as every peer).
  const base = Date.now() + 1000;
  const limit = timeout((2 * args.seconds + 30) * 1000);
  await addDelayed(queue, n, base, args.seconds * 1000);
  log(`sent ${n} delayed jobs in ${Date.now() - base + 1000} ms`);
  await Promise.race([w.done, limit.promise]);
  limit.cancel();
  await w.worker.close();
  await queue.close();
  const got = w.lateness.slice(0, n).sort((a, b) => a - b);
  return {
    p50: percentile(got, 50),
    p99: percentile(got, 99),
    max: got.length ? got[got.length - 1] : -1,
    count: Math.min(n, w.handled()),
  };
}

async function idle() {
  const w = newWorker(QUEUE, Infinity);
  await w.worker.waitUntilReady();
  await sleep(300); // let the worker reach its blocking wait, as the RMQ peer does
  console.log('READY');
  await sleep(args.seconds * 1000);
  await w.worker.close();
  return { count: 0 };
}

/** Resolves once `w` has handled `count` jobs, or at `until` (nowMs() scale), whichever comes first. */
async function waitHandled(w, count, until) {
  while (w.handled() < count && nowMs() < until) await sleep(10);
}

/**
 * The warm-up phase (--warmup-seconds, PROTOCOL.md): lets V8 compile the code paths the measurement uses before its
 * clock starts, on the separate queue WARMUP_QUEUE, so nothing touches the measured queue. Nothing here is measured.
 *  - produce-batch / produce-single / consume / produce-consume: the normal Worker (same options and concurrency,
 *    no-op processor) runs while rounds of WARMUP_ROUND addBulk jobs, then WARMUP_ROUND single adds, go in, exactly
 *    as the produce workloads send them; the deadline is checked between chunks / windows.
 *  - delay: the delay workload's Worker runs while rounds of WARMUP_DELAY_ROUND delayed jobs, due over the next
 *    second, go in with the same addBulk; each round waits for its jobs (at most until the deadline + 2 s).
 * Afterwards the Worker is closed (it stops fetching), the queue obliterated (every bull:bench-warmup:* key) and closed.
 */
async function warmUp() {
  if (args.warmupSeconds <= 0 || !WARMUP_WORKLOADS.has(args.workload)) return;
  const began = nowMs();
  const deadline = began + args.warmupSeconds * 1000;
  const delayed = args.workload === 'delay';
  const w = delayed ? delayWorker(WARMUP_QUEUE, Infinity) : newWorker(WARMUP_QUEUE, Infinity);
  const queue = newQueue(WARMUP_QUEUE);
  await Promise.all([w.worker.waitUntilReady(), queue.waitUntilReady()]);
  let sent = 0;
  while (nowMs() < deadline) {
    if (delayed) {
      await addDelayed(queue, WARMUP_DELAY_ROUND, Date.now(), WARMUP_DELAY_SPREAD);
      sent += WARMUP_DELAY_ROUND;
      await waitHandled(w, sent, deadline + 2000);
    } else {
      sent += await addBulk(queue, WARMUP_ROUND, deadline);
      sent += await addSingle(queue, WARMUP_ROUND, deadline);
    }
  }
  await w.worker.close();
  const handled = w.handled();
  await queue.obliterate({ force: true });
  await queue.close();
  log(`warmed up: ${sent} sent, ${handled} handled in ${Math.round(nowMs() - began)} ms`);
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
  await warmUp();
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
