'use strict';
// One contender's acquire and release for each peer, shared by the link mode's driver (driver.js)
// and the scale mode's (scale.js).
//
//   makeLocker(peer, { conn, sub, key, ttlMs, tuned, limit, tag })
//
// conn: the contender's ioredis client (a Redis or a Cluster); sub: a client for its
// subscriptions (the pub/sub imitation only); key: the lock's key; ttlMs: the lock's TTL;
// tuned: the setting a careful user would pick rather than the library's defaults; limit: the
// semaphore's places; tag: a name for the contender, part of the imitation's token. Returns
// { acquire, release } (and subscribe, for the imitation), or null for a peer not in `peers`.
// acquire() resolves to what release() takes, or to null when the library gave up (redlock's
// retries spent, redis-semaphore's acquireTimeout); the caller then calls again at once.
//
//   redlock5   redlock 5.0.0-beta.2; tuned: retryDelay 10 ms, retryJitter 5 ms
//   redlock4   redlock 4.2.0; tuned: the same
//   mutex      redis-semaphore's Mutex; tuned: retryInterval 2 ms
//   semaphore  redis-semaphore's Semaphore with `limit` places; tuned: retryInterval 2 ms
//   pubsub     our imitation of a Redisson-style pub/sub wake (written here; it is not Redisson
//              and shares no code with it): the acquire script sets the key (NX PX) or returns
//              its PTTL; a waiter, subscribed to the key's channel from the start (Redisson
//              subscribes when it starts waiting: the imitation sends fewer requests), waits for
//              a message published after its attempt was sent, or for the TTL, then tries again;
//              the release script deletes the key if it holds the owner's token and PUBLISHes on
//              the channel, which is an argument of the script, not a key, so that a cluster
//              takes it. Every subscriber is woken by a release; one wins.
function makeLocker(peer, { conn, sub, key, ttlMs, tuned, limit, tag }) {
  const redlockSetting = tuned ? { retryDelay: 10, retryJitter: 5 } : {};
  const semaphoreSetting = tuned ? { retryInterval: 2 } : {};
  if (peer === 'redlock5') {
    const { default: Redlock, ExecutionError } = require('redlock');
    const redlock = new Redlock([conn], redlockSetting);
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
    const redlock = new Redlock([conn], redlockSetting);
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
  if (peer === 'mutex' || peer === 'semaphore') {
    const { Mutex, Semaphore, TimeoutError } = require('redis-semaphore');
    return {
      acquire: async () => {
        const m =
          peer === 'mutex'
            ? new Mutex(conn, key, semaphoreSetting)
            : new Semaphore(conn, key, limit, semaphoreSetting);
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
      numberOfKeys: 1,
      lua: `if redis.call('get', KEYS[1]) == ARGV[1] then
              redis.call('del', KEYS[1])
              redis.call('publish', ARGV[2], 'released')
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
    const token = `${process.pid}:${tag}:${Math.random().toString(16).slice(2)}`;
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
        if (Number(await conn.pubsubRelease(key, t, channel)) !== 1) {
          throw new Error('the release found another owner');
        }
      },
    };
  }
  return null;
}

const peers = ['redlock5', 'redlock4', 'mutex', 'semaphore', 'pubsub'];

module.exports = { makeLocker, peers };
