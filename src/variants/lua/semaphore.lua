-- The counting semaphore (src/variants/semaphore.cpp, resplock/variants/semaphore.hpp): at most
-- `limit` holders, each with a lease of its own that ends at a time on the server's clock. One
-- script, seven operations, so that the server caches one text.
--
-- KEYS[1]  KEY, the leases: a sorted set, member = a holder's token, score = the lease's expiry
--          in ms on the server's clock (TIME); its PTTL follows the latest expiry
-- KEYS[2]  BASE:fence, the last fencing number handed out (a string of digits)
-- KEYS[3]  BASE:wake, the list that waiters of the plain (not fair) mode block on
-- KEYS[4]  BASE:q, the fair queue: a list of waiting tokens, first come first
-- KEYS[5]  BASE:w, the queue's entries: a hash, token -> "expiry:ttl:limit", expiry on the
--          server's clock (ms), the TTL and the limit that waiter asked for
-- ARGV[1]  the operation (below)
-- ARGV[2]  the caller's token (may be empty for q)
-- ARGV[3]  the TTL in ms ('t', 'a', 'e'; else unused)
-- ARGV[4]  the caller's limit: its lease is granted only while fewer leases live
-- ARGV[5]  entry_ms: how long the caller's queue entry lives without a refresh ('a')
-- ARGV[6]  BASE:f:, the prefix of the fair waiters' wake lists: BASE:f:TOKEN wakes TOKEN with
--          one item, the fencing number of the lease it was handed
--
-- Operations and returns ("grant" is {fence, ms}: the fencing number as a bulk string of
-- digits, and the ms the caller's lease has left; "busy" is an integer: the ms until the
-- earliest lease expires, the longest an attempt may wait before one could be free, or -1
-- when none lives):
--   t  attempt: grant, or busy. Free places go to the queue's live waiters first; the caller
--      takes one only when none is queued and fewer than its limit live.
--   a  attempt as t; when busy, joins the queue (at its end) or refreshes the caller's entry
--      to expire entry_ms from now
--   l  leave the queue: grant when the caller was handed a lease meanwhile, else busy
--   r  release: 1 the caller's lease was removed, 0 it had no live one (the owner script's
--      answers, src/core/lua/owner.lua); freed places are handed to the queue, else one
--      plain waiter is woken through BASE:wake
--   e  extend: 1 the caller's live lease now ends ARGV[3] ms from now, 0 it has none
--   q  query: {live leases, ms left of the caller's lease (-2: none), live waiters queued}
--   h  holders: the live leases from position ARGV[3] (0: the first to end), at most ARGV[5]
--      of them, as a flat array {label, ms left, label, ms left, ...}; a label is the owner
--      label in front of a token's hex ('' for a token without one): never a token itself
-- Companion names are written BASE:suffix here; see semaphore.hpp for the real ones.
--
-- Names (part of the text sent): k KEYS, a ARGV, r redis.call, o the operation, t the token,
-- p the wake lists' prefix, n the server's time in ms, u in microseconds, f a grant, g the
-- hand-off, x KEY's PTTL update, b the caller's lease, e a grant's fencing number.

-- Redis 3.2 and 4 refuse a write after TIME unless the script replicates its effects.
pcall(redis.replicate_commands)
local k,a,r=KEYS,ARGV,redis.call
local o,t,p=a[1],a[2],a[6]
local c=r('time')
local n=c[1]*1000+math.floor(c[2]/1000)
local u=c[1]*1000000+c[2]
-- Leases that ended are gone before anything is counted.
r('zremrangebyscore',k[1],'-inf',n)

-- f(w,l): a lease of l ms for token w, and its fencing number: the larger of BASE:fence + 1 and
-- the clock in microseconds, as in src/core/lua/options_acquire.lua (SET below the clock, INCR
-- at or above it: exact past 2^53, an error for a value that is no number). BASE:fence lives at
-- least as long as every lease granted or extended, so it is never kept for nobody.
local function f(w,l)
  r('zadd',k[1],n+l,w)
  if (tonumber(r('get',k[2]) or 0) or u)<u then
    r('set',k[2],string.format('%.0f',u))
  else
    r('incr',k[2])
  end
  if r('pttl',k[2])<tonumber(l) then r('pexpire',k[2],l) end
  return r('get',k[2])
end

-- x(): KEY lives until its latest lease ends (an empty sorted set is no key at all).
local function x()
  local z=r('zrange',k[1],-1,-1,'withscores')
  if z[2] then r('pexpire',k[1],z[2]-n) end
end

-- g(m): hands free places to the queue's head while its live waiter's own limit allows,
-- dropping expired entries on the way; stops at a live head that does not fit. Each waiter
-- handed a lease, but m (the caller, who learns it from the reply), is woken by one item in a
-- fresh wake list: its fencing number; the list lives as long as the lease. Returns how many
-- were handed a lease, and m's fencing number when m was.
local function g(m)
  local h,e=0
  while true do
    local w=r('lindex',k[4],0)
    if not w then return h,e end
    local y,l,q=string.match(r('hget',k[5],w) or '','(%d+):(%d+):(%d+)')
    if y and tonumber(y)>n then
      if r('zcard',k[1])>=tonumber(q) then return h,e end
      local v=f(w,l)
      h=h+1
      if w==m then
        e=v
      else
        local d=p..w
        r('del',d)
        r('rpush',d,v)
        r('pexpire',d,l)
      end
    end
    r('lpop',k[4])
    r('hdel',k[5],w)
  end
end

local b=r('zscore',k[1],t)

if o=='q' then
  local s,v=0,r('hvals',k[5])
  for i=1,#v do
    if (tonumber(string.match(v[i],'^%d+')) or 0)>n then s=s+1 end
  end
  return {r('zcard',k[1]),b and b-n or -2,s}
end

if o=='h' then
  local z,s=r('zrange',k[1],a[3],a[3]+a[5]-1,'withscores'),{}
  for i=1,#z,2 do
    s[i]=string.match(z[i],'^([^:]+):%x+$') or ''
    s[i+1]=z[i+1]-n
  end
  return s
end

if o=='e' then
  if not b then return 0 end
  r('zadd',k[1],'xx',n+a[3],t)
  if r('pttl',k[2])<tonumber(a[3]) then r('pexpire',k[2],a[3]) end
  x()
  return 1
end

if o=='r' then
  local d=r('zrem',k[1],t)
  -- A place freed (or left by a lease that ended): the queue first, else one plain waiter.
  if g()==0 and d==1 then
    r('del',k[3])
    r('rpush',k[3],1)
    r('pexpire',k[3],1000)
  end
  x()
  return d
end

-- 't', 'a', 'l'. A lease handed over before this request: its number waits in the caller's
-- wake list (a BLPOP whose reply was lost may have taken it: then '', which the client refuses).
if b then
  local e=r('lpop',p..t) or ''
  r('del',p..t)
  return {e,b-n}
end
if o=='l' then
  r('lrem',k[4],0,t)
  r('hdel',k[5],t)
end
local h,e=g(t)
if not e and o~='l' and r('llen',k[4])==0 and r('zcard',k[1])<tonumber(a[4]) then
  e=f(t,a[3])
end
if h>0 or e then x() end
if e then return {e,r('zscore',k[1],t)-n} end
if o=='a' then
  -- Busy: queue once (a refresh keeps the caller's place), and (re)start the entry's life.
  if not r('hget',k[5],t) then r('rpush',k[4],t) end
  r('hset',k[5],t,(n+a[5])..':'..a[3]..':'..a[4])
  -- BASE:q and BASE:w live at least as long as this entry; only raised, never past the latest
  -- entry's expiry, they vanish by themselves once every entry expired.
  for i=4,5 do
    if r('pttl',k[i])<tonumber(a[5]) then r('pexpire',k[i],a[5]) end
  end
end
-- Busy: the ms until the earliest lease ends (-1 when none lives: a leave, or a queue head whose
-- stated limit was 0).
local z=r('zrange',k[1],0,0,'withscores')
return z[2] and z[2]-n or -1
