'use strict';
// The link mode's driver for peer lock libraries (run by bench/run.sh --link and --quick with
// Node.js 20, the packages installed by `npm ci` from bench/peers/package-lock.json into the bench
// build folder and found through NODE_PATH).
//
//   node driver.js PEER SETTING PORT CLIENTS HOLD_MS SECONDS OUT_FILE
//
// PEER: redlock5 (redlock 5.0.0-beta.2), redlock4 (redlock 4.2.0), mutex (redis-semaphore's
// Mutex), pubsub (our imitation of a Redisson-style pub/sub wake, lockers.js). SETTING: defaults
// (the library's own) or tuned (redlock retryDelay 10 ms, retryJitter 5 ms; Mutex retryInterval
// 2 ms; the imitation has one setting, named imitation). CLIENTS async clients in this one process, each with its
// own ioredis connection to PORT (the delay proxy), contend for one key for SECONDS, each holding
// it HOLD_MS; a client that released tries again only once another has acquired after its
// release (the rejoin rule of resplock_bench's hand-off part), so every acquisition is a hand-off.
//
// It writes the record file that `resplock_bench records` reads, which computes the figures with
// the same code as resplock's own runs: `hold CLIENT ACQUIRED_NS RELEASE_NS` per acquisition,
// on process.hrtime.bigint(), which reads CLOCK_MONOTONIC (run.sh checks it against
// resplock_bench's clock); ACQUIRED_NS just after the acquiring call resolved, RELEASE_NS just
// before the release call, whose request ioredis writes to the socket within that call (the C++
// side stamps the start of send(); this stamp is earlier by ioredis' encoding, a few us).
// `live_max N`: the most holders at once that a live count saw. `figure gave_up N`: acquiring
// calls that gave up (redlock's retries spent, Mutex's acquireTimeout); the client then calls
// again at once, as a user who must get the lock would.
//
// The peers' acquire and release, the pub/sub imitation's included, are in lockers.js.
const Redis = require('ioredis');
const { makeLocker, peers } = require('./lockers');

const [peer, setting, portText, clientsText, holdText, secondsText, outFile] =
  process.argv.slice(2);
if (!outFile) {
  console.error('usage: node driver.js PEER SETTING PORT CLIENTS HOLD_MS SECONDS OUT_FILE');
  process.exit(64);
}
const port = Number(portText);
const clients = Number(clientsText);
const holdMs = Number(holdText);
const seconds = Number(secondsText);
const ttlMs = 10000; // as resplock's hand-off runs: far beyond any hold
const key = 'bench:peer';
const tuned = setting === 'tuned';
if (!peers.includes(peer) || peer === 'semaphore') {
  console.error(`driver.js: unknown peer ${peer}`);
  process.exit(64);
}
if (!(peer === 'pubsub' ? ['imitation'] : ['defaults', 'tuned']).includes(setting)) {
  console.error(`driver.js: unknown setting ${setting}`);
  process.exit(64);
}

const now = () => process.hrtime.bigint();
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

function connect() {
  const conn = new Redis({ host: '127.0.0.1', port, lazyConnect: true, maxRetriesPerRequest: 1 });
  conn.on('error', () => {});
  return conn.connect().then(() => conn);
}

async function main() {
  const conns = [];
  const subs = [];
  const opened = [];
  for (let i = 0; i < clients; i++) {
    opened.push(connect().then((c) => conns.push(c)));
    if (peer === 'pubsub') opened.push(connect().then((c) => subs.push(c)));
  }
  await Promise.all(opened);
  const lockers = conns.map((conn, i) =>
    makeLocker(peer, { conn, sub: subs[i], key, ttlMs, tuned, tag: i }),
  );
  await Promise.all(lockers.filter((l) => l.subscribe).map((l) => l.subscribe()));

  const records = [];
  let acquisitions = 0;
  let holders = 0;
  let liveMax = 0;
  let gaveUp = 0;
  let acquiredWaiters = [];
  const startNs = now() + 200000000n;
  const endNs = startNs + BigInt(seconds) * 1000000000n;
  const endDelayMs = () => Math.max(0, Number(endNs - now()) / 1e6);

  async function contender(i) {
    const l = lockers[i];
    await sleep(Number(startNs - now()) / 1e6);
    while (now() < endNs) {
      const held = await l.acquire();
      if (held === null) {
        gaveUp += 1;
        continue;
      }
      const acquired = now();
      if (acquired >= endNs) {
        // Granted after the end: released at once and not counted, as resplock_bench does.
        await l.release(held);
        break;
      }
      holders += 1;
      liveMax = Math.max(liveMax, holders);
      acquisitions += 1;
      const waiting = acquiredWaiters;
      acquiredWaiters = [];
      for (const w of waiting) w();
      await sleep(holdMs);
      const beforeRelease = acquisitions;
      holders -= 1;
      const release = now();
      await l.release(held);
      records.push(`hold ${i} ${acquired} ${release}`);
      // Rejoin once another has acquired after this release, or at the end.
      while (acquisitions === beforeRelease && now() < endNs) {
        await new Promise((resolve) => {
          const timer = setTimeout(resolve, endDelayMs() + 1);
          acquiredWaiters.push(() => {
            clearTimeout(timer);
            resolve();
          });
        });
      }
    }
  }
  await Promise.all(lockers.map((_, i) => contender(i)));
  for (const c of conns.concat(subs)) c.disconnect();
  const text = records.concat([`live_max ${liveMax}`, `figure gave_up ${gaveUp}`]).join('\n');
  require('fs').writeFileSync(outFile, `${text}\n`);
}

main().catch((e) => {
  console.error(`driver.js: ${peer} ${setting}: ${e && e.stack ? e.stack : e}`);
  process.exit(1);
});
