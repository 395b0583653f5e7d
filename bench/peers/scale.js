'use strict';
// The scale mode's driver for the peer libraries (run by bench/run.sh --scale, Node.js 20, the
// packages of bench/peers/package-lock.json found through NODE_PATH).
//
//   node scale.js PEER single|cluster PORTS DEVICES KEYS HOLD_MS SECONDS OUT_FILE SCALE_BIN [LIMIT]
//
// DEVICES async contenders in this one process, device d on key d % KEYS ("scale:k:<n>"); each
// acquires, holds HOLD_MS, releases and tries again at once, for SECONDS: the loop of
// resplock_scale's devices. single: PORTS is one port and each device has its own ioredis
// connection to it (the pub/sub imitation: a second, subscribed one). cluster: PORTS are the
// masters of a Redis Cluster (comma-separated) and each device has its own ioredis Cluster
// client, which opens a connection to a master when it first sends it a command (the device
// sends one to its key before the start, so that it waits with its key's master connected) and
// one to a node for its subscriptions (the pub/sub imitation); the connections each device
// holds are counted from the servers' INFO. PEER, each with the setting the link mode calls tuned:
//   redlock5   redlock 5.0.0-beta.2, retryDelay 10 ms, retryJitter 5 ms
//   mutex      redis-semaphore's Mutex, retryInterval 2 ms
//   pubsub     the pub/sub imitation (lockers.js)
//   semaphore  redis-semaphore's Semaphore with LIMIT places (default 10), retryInterval 2 ms
// Before it opens any connection, once every connection is open, and again when every contender
// has stopped, it runs `SCALE_BIN snapshot PORTS OUT_FILE.empty` (`.before`, `.after`): the
// servers' INFO, from which `resplock_scale records` takes the connections and memory per
// device, and the request counts and CPU of the run. OUT_FILE gets
// `hold DEVICE ACQUIRED_NS RELEASE_NS` per acquisition (process.hrtime.bigint(), CLOCK_MONOTONIC;
// ACQUIRED_NS once the acquiring call resolved, RELEASE_NS just before the release call) and
// `figure NAME VALUE` lines: gave_up (acquiring calls that gave up: redlock's retries spent,
// acquireTimeout; the device calls again at once), live_max (the most holders of one key at
// once, counted live), client_rss_bytes_per_device (this process's RSS growth while the
// connections opened, per device) and client_cpu_pct (its CPU over the run).
const Redis = require('ioredis');
const { makeLocker, peers } = require('./lockers');
const { execFileSync } = require('child_process');
const fs = require('fs');

const [peer, topology, portsText, devicesText, keysText, holdText, secondsText, outFile, scaleBin] =
  process.argv.slice(2);
const limitText = process.argv[11];
if (!scaleBin || (topology !== 'single' && topology !== 'cluster')) {
  console.error(
    'usage: node scale.js PEER single|cluster PORTS DEVICES KEYS HOLD_MS SECONDS OUT_FILE' +
      ' SCALE_BIN [LIMIT]',
  );
  process.exit(64);
}
if (!peers.includes(peer) || peer === 'redlock4') {
  console.error(`scale.js: unknown peer ${peer}`);
  process.exit(64);
}
const cluster = topology === 'cluster';
const ports = portsText.split(',').map(Number);
const devices = Number(devicesText);
const keys = Number(keysText);
const holdMs = Number(holdText);
const seconds = Number(secondsText);
const limit = Number(limitText || 10);
const ttlMs = 10000; // as resplock_scale: far beyond any hold
const keyOf = (d) => `scale:k:${d % keys}`;

const now = () => process.hrtime.bigint();
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

function connect() {
  const conn = cluster
    ? new Redis.Cluster(
        ports.map((p) => ({ host: '127.0.0.1', port: p })),
        { lazyConnect: true, redisOptions: { maxRetriesPerRequest: 1 } },
      )
    : new Redis({ host: '127.0.0.1', port: ports[0], lazyConnect: true, maxRetriesPerRequest: 1 });
  conn.on('error', () => {});
  return conn.connect().then(() => conn);
}

async function main() {
  execFileSync(scaleBin, ['snapshot', portsText, `${outFile}.empty`]);
  const rss0 = process.memoryUsage().rss;
  const conns = new Array(devices);
  const subs = new Array(devices);
  // Open the connections a hundred at a time (the server's accept backlog).
  for (let first = 0; first < devices; first += 100) {
    const opened = [];
    for (let d = first; d < Math.min(devices, first + 100); d++) {
      // A device's first command, to its key's master: the connection it will use (a Cluster
      // client connects to a master when it first sends it a command).
      opened.push(
        connect()
          .then((c) => (cluster ? c.pttl(keyOf(d)).then(() => c) : c))
          .then((c) => (conns[d] = c)),
      );
      // The imitation's subscriptions: a second connection on one server; a Cluster client
      // keeps a subscriber connection of its own, so there it subscribes on the same client.
      if (peer === 'pubsub' && !cluster) opened.push(connect().then((c) => (subs[d] = c)));
    }
    await Promise.all(opened);
  }
  const lockers = conns.map((conn, d) =>
    makeLocker(peer, {
      conn,
      sub: cluster ? conn : subs[d],
      key: keyOf(d),
      ttlMs,
      tuned: true,
      limit,
      tag: d,
    }),
  );
  await Promise.all(lockers.filter((l) => l.subscribe).map((l) => l.subscribe()));
  const rss1 = process.memoryUsage().rss;

  const records = [];
  const holders = new Array(keys).fill(0);
  let liveMax = 0;
  let gaveUp = 0;
  execFileSync(scaleBin, ['snapshot', portsText, `${outFile}.before`]);
  const cpu0 = process.cpuUsage();
  const startNs = now() + 100000000n;
  const endNs = startNs + BigInt(seconds) * 1000000000n;

  async function device(d) {
    const l = lockers[d];
    const k = d % keys;
    await sleep(Number(startNs - now()) / 1e6);
    while (now() < endNs) {
      const held = await l.acquire();
      if (held === null) {
        gaveUp += 1;
        continue;
      }
      const acquired = now();
      if (acquired >= endNs) {
        await l.release(held); // granted after the end: not counted
        break;
      }
      holders[k] += 1;
      liveMax = Math.max(liveMax, holders[k]);
      await sleep(holdMs);
      holders[k] -= 1;
      const release = now();
      await l.release(held);
      records.push(`hold ${d} ${acquired} ${release}`);
    }
  }
  await Promise.all(lockers.map((_, d) => device(d)));
  const cpu = process.cpuUsage(cpu0);
  const ranS = Number(now() - startNs) / 1e9;
  execFileSync(scaleBin, ['snapshot', portsText, `${outFile}.after`]);
  for (const c of conns.concat(subs)) if (c) c.disconnect();
  const text = records.concat([
    `figure gave_up ${gaveUp}`,
    `figure live_max ${liveMax}`,
    `figure client_rss_bytes_per_device ${Math.round((rss1 - rss0) / devices)}`,
    `figure client_cpu_pct ${((100 * (cpu.user + cpu.system)) / 1e6 / ranS).toFixed(1)}`,
  ]);
  fs.writeFileSync(outFile, `${text.join('\n')}\n`);
}

main().catch((e) => {
  console.error(`scale.js: ${peer}: ${e && e.stack ? e.stack : e}`);
  process.exit(1);
});
