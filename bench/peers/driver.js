'use strict';
// The link mode's driver for peer lock libraries (run by bench/run.sh --link and --quick with
// Node.js 20, the packages installed by `npm ci` from bench/peers/package-lock.json into the bench
// build folder and found through NODE_PATH).
//
//   node driver.js PEER SETTING PORT CLIENTS HOLD_MS SECONDS OUT_FILE
//
// PEER: redlock5 (redlock 5.0.0-beta.2), redlock4 (redlock 4.2.0), mutex (redis-semaphore's
// Mutex), pubsub (our imitation of a Redisson-style pub/sub wake, see below). SETTING: defaults
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
// The pub/sub imitation (written here; it is not Redisson and shares no code with it): the
// acquire script sets the key (NX PX) or returns its PTTL; a waiter, subscribed to the key's
// channel on a second connection from the start (Redisson subscribes when it starts waiting and
// unsubscribes when done: the imitation sends fewer requests), waits for a message published
// after its attempt was sent, or for the TTL, then tries again; the release script deletes the
// key if it holds the owner's token and PUBLISHes on the channel. Every subscriber is woken by a
// release; one wins. It lives here, next to the peers, rather than beside resplock's modes:
// it needs a second, subscribed connection per client and an event-driven wait, which ioredis
// gives as is, and it then runs on the same client runtime as the peers it stands beside.
const Redis = require('ioredis');

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
if (!(peer === 'pubsub' ? ['imitation'] : ['defaults', 'tuned']).includes(setting)) {
  console.error(`driver.js: unknown setting ${setting}`);
  process.exit(64);
}

const now = () => process.hrtime.bigint();
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

// One contender's acquire and release for PEER, over its connection(s).
function makeLocker(conn, sub) {
  if (peer === 'redlock5') {
    const { default: Redlock, ExecutionError } = require('redlock');
    const redlock = new Redlock([conn], tuned ? { retryDelay: 10, retryJitter: 5 } : {});
    redlock.on('error', () => {}); // a vote against is reported here too: not an error
    return {
      acquire: async () => {
        try {
          return await redlock.acquire([key], ttlMs);
        } catch (e) {
          if (e instanceof ExecutionError) return null;
          throw e;
        }
      },
      release: (lock) => lock.release(),
    };
  }
  if (peer === 'redlock4') {
    const Redlock = require('redlock4');
    const redlock = new Redlock([conn], tuned ? { retryDelay: 10, retryJitter: 5 } : {});
    return {
      acquire: async () => {
        try {
          return await redlock.lock(key, ttlMs);
        } catch (e) {
          if (e instanceof Redlock.LockError) return null;
          throw e;
        }
      },
      release: (lock) => lock.unlock(),
    };
  }
  if (peer === 'mutex') {
    const { Mutex, TimeoutError } = require('redis-semaphore');
    return {
      acquire: async () => {
        const m = new Mutex(conn, key, tuned ? { retryInterval: 2 } : {});
        try {
          await m.acquire();
          return m;
        } catch (e) {
          if (e instanceof TimeoutError) return null;
          throw e;
        }
      },
      release: (m) => m.release(),
    };
  }
  if (peer === 'pubsub') {
    const channel = `${key}:released`;
    conn.defineCommand('pubsubAcquire', {
      numberOfKeys: 1,
      lua: `if redis.call('set', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then return -1 end
            return redis.call('pttl', KEYS[1])`,
    });
    conn.defineCommand('pubsubRelease', {
      numberOfKeys: 2,
      lua: `if redis.call('get', KEYS[1]) == ARGV[1] then
              redis.call('del', KEYS[1])
              redis.call('publish', KEYS[2], 'released')
              return 1
            end
            return 0`,
    });
    let messages = 0;
    let wake = null;
    sub.on('message', () => {
      messages += 1;
      if (wake) wake();
    });
    const token = `${process.pid}:${Math.random().toString(16).slice(2)}`;
    return {
      subscribe: () => sub.subscribe(channel),
      acquire: async () => {
        for (;;) {
          const seen = messages;
          const ttl = Number(await conn.pubsubAcquire(key, token, ttlMs));
          if (ttl === -1) return token;
          if (messages !== seen) continue; // released while the attempt was on its way
          await new Promise((resolve) => {
            const timer = setTimeout(resolve, ttl > 0 ? ttl : 1);
            wake = () => {
              clearTimeout(timer);
              wake = null;
              resolve();
            };
          });
        }
      },
      release: async (t) => {
        if (Number(await conn.pubsubRelease(key, channel, t)) !== 1) {
          throw new Error('the release found another owner');
        }
      },
    };
  }
  console.error(`driver.js: unknown peer ${peer}`);
  process.exit(64);
}

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
  const lockers = conns.map((c, i) => makeLocker(c, subs[i]));
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
