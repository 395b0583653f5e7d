-- The fair lock (src/variants/fair_lock.cpp, resplock/variants/fair_lock.hpp): a FIFO queue of
-- waiters on the server, and a release that hands the lock to the first live one. One script,
-- four operations, so that the server caches one text.
--
-- KEYS[1]  KEY, the lock: a string holding the holder's token, with a TTL
-- KEYS[2]  BASE:q, the queue: a list of waiting tokens, first come first
-- KEYS[3]  BASE:w, the entries: a hash, token -> "expiry:ttl", where expiry is on the server's
--          clock (ms) and ttl is the TTL the waiter asked for
-- ARGV[1]  the operation: 'r' release, 'l' leave, 't' attempt, 'a' attempt and queue
-- ARGV[2]  the caller's token
-- ARGV[3]  the TTL the caller asks for, in ms ('t', 'a')
-- ARGV[4]  entry_ms: how long the caller's entry lives without being refreshed ('a')
-- ARGV[5]  BASE:f:, the prefix of the wake lists: BASE:f:TOKEN wakes the waiter TOKEN
--
-- Operations and returns:
--   r  release: -1 another value holds KEY, 0 KEY is gone (the queue is handed on anyway); else
--      hands KEY on, or deletes it when no live waiter is queued, and returns 1 (the owner
--      script's answers, src/core/lua/owner.lua)
--   l  leave: removes the caller's entry; {1, PTTL} if KEY holds its token (it was handed the
--      lock meanwhile), else {0, PTTL}
--   t  attempt: when KEY is free it goes to the first live waiter, or to the caller when none
--      is queued; {1, PTTL} when KEY holds the caller's token, else {0, PTTL}
--   a  attempt as t; when busy, joins the queue (at its end) or refreshes the caller's entry
--      to expire entry_ms from now
-- Companion names are written BASE:suffix here; see fair_lock.hpp for the real ones.
--
-- Names (part of the text sent): k KEYS, a ARGV, r redis.call, o the operation, t the token, n
-- the server's time in ms, g the hand-off, v KEY's value.
local k,a,r=KEYS,ARGV,redis.call
local o,t=a[1],a[2]
-- The server's clock, the one all entries' expiries are on: no client's clock is trusted.
local c=r('time')
local n=c[1]*1000+math.floor(c[2]/1000)

-- g(m): hands KEY to the first waiter of the queue whose entry has not expired, dropping the
-- expired ones (and any without an entry) on the way, with the TTL that waiter
-- asked for. Wakes that waiter by one item in its wake list, unless it is m: the caller, who
-- learns it from the reply. Returns the new holder's token, or nil when no live waiter is
-- queued.
local function g(m)
  while true do
    local w=r('lpop',k[2])
    if not w then return end
    local e=r('hget',k[3],w)
    r('hdel',k[3],w)
    if e then
      local x,l=string.match(e,'(%d+):(%d+)')
      if tonumber(x)>n then
        -- SET, not SET NX: it replaces a releasing holder's value and TTL, so the hand-off
        -- needs no DEL first, one command less on its path.
        r('set',k[1],w,'px',l)
        if w~=m then
          -- One item in a fresh list: the waiter's BLPOP returns; the list lives as long as
          -- the lock it announces.
          local q=a[5]..w
          r('del',q)
          r('rpush',q,1)
          r('pexpire',q,l)
        end
        return w
      end
    end
  end
end

local v=r('get',k[1])

if o=='r' then
  if v~=t then
    -- Not the caller's. If KEY expired, the queue would wait for nobody: hand it on now.
    if not v then g() end
    return v and -1 or 0
  end
  if not g() then r('del',k[1]) end
  return 1
end

if o=='l' then
  r('lrem',k[2],0,t)
  r('hdel',k[3],t)
  return {v==t and 1 or 0,r('pttl',k[1])}
end

-- 't' and 'a'. A free KEY goes to the queue first: the caller takes it only when nobody live
-- is waiting (SET answers OK, a table, so the "and t" yields the caller's token).
if not v then v=g(t) or (r('set',k[1],t,'px',a[3]) and t) end
if v==t then return {1,r('pttl',k[1])} end

if o=='a' then
  -- Busy: queue once (a refresh keeps the caller's place), and (re)start the entry's life.
  if not r('hget',k[3],t) then r('rpush',k[2],t) end
  r('hset',k[3],t,(n+a[4])..':'..a[3])
  -- BASE:q and BASE:w live at least as long as this entry; only raised, never past the latest
  -- entry's expiry, they vanish by themselves once every entry expired.
  for i=2,3 do
    if r('pttl',k[i])<tonumber(a[4]) then r('pexpire',k[i],a[4]) end
  end
end
return {0,r('pttl',k[1])}
