-- The fair lock (src/variants/fair_lock.cpp, resplock/variants/fair_lock.hpp): a FIFO queue of
-- waiters on the server, and a release that hands the lock to the first live one. One script,
-- four operations, so that the server caches one text.
--
-- KEYS[1]  KEY, the lock: a string holding the holder's token, with a TTL
-- KEYS[2]  BASE:q, the queue: a list of waiting tokens, first come first
-- KEYS[3]  BASE:w, the entries: a hash, token -> "expiry:ttl:fence", where expiry is on the
--          server's clock (ms), ttl is the TTL the waiter asked for and fence is 1 when it asked
--          for a fencing number
-- KEYS[4]  BASE:fence, the last fencing number handed out: the plain lock's KEY:fence
--          (src/core/lua/options_acquire.lua), so that plain and fair holders of KEY that ask for
--          numbers draw from one sequence; written only by a grant that asked for a number
-- ARGV[1]  the operation: 'r' release, 'l' leave, 't' attempt, 'a' attempt and queue
-- ARGV[2]  the caller's token
-- ARGV[3]  the TTL the caller asks for, in ms ('t', 'a')
-- ARGV[4]  entry_ms: how long the caller's entry lives without being refreshed ('a')
-- ARGV[5]  BASE:f:, the prefix of the wake lists: BASE:f:TOKEN wakes the waiter TOKEN
-- ARGV[6]  '1' when the caller asks for a fencing number with its grant ('t', 'a', 'l'), else '0'
--
-- Operations and returns ("held" is {1, PTTL} with KEY's PTTL, or {1, PTTL, fence} when the
-- caller asked for a fencing number: a bulk string of digits):
--   r  release: -1 another value holds KEY, 0 KEY is gone (the queue is handed on anyway); else
--      hands KEY on, or deletes it when no live waiter is queued, and returns 1 (the owner
--      script's answers, src/core/lua/owner.lua)
--   l  leave: removes the caller's entry; held if KEY holds its token (it was handed the lock
--      meanwhile), else {0, PTTL}
--   t  attempt: when KEY is free it goes to the first live waiter, or to the caller when none
--      is queued; held when KEY holds the caller's token, else {0, PTTL}
--   a  attempt as t; when busy, joins the queue (at its end) or refreshes the caller's entry
--      to expire entry_ms from now
-- A waiter handed the lock by another client's call is woken by one item in its wake list: its
-- fencing number when its entry asked for one, else 1.
-- Companion names are written BASE:suffix here; see fair_lock.hpp for the real ones.
--
-- Names (part of the text sent): k KEYS, a ARGV, r redis.call, o the operation, t the token, c
-- the server's TIME, n its time in ms, u in microseconds, s a grant, g the hand-off, h the answer
-- "held", i a grant's wake item (fencing number or 1), v KEY's value.

-- Redis 3.2 and 4 refuse a write after TIME unless the script replicates its effects.
pcall(redis.replicate_commands)
local k,a,r=KEYS,ARGV,redis.call
local o,t=a[1],a[2]
-- The server's clock, the one all entries' expiries are on: no client's clock is trusted.
local c=r('time')
local n=c[1]*1000+math.floor(c[2]/1000)

-- s(w,l,f): sets KEY to w for l ms (SET, not SET NX: it replaces a releasing holder's value and
-- TTL, so a hand-off needs no DEL first). With f '1', returns the next fencing number: the larger
-- of BASE:fence + 1 and the clock in microseconds, as in src/core/lua/options_acquire.lua (SET
-- below the clock, INCR at or above it: exact past 2^53, an error for a value that is no
-- number); else 1.
local function s(w,l,f)
  r('set',k[1],w,'px',l)
  if f~='1' then return 1 end
  local u=c[1]*1000000+c[2]
  if (tonumber(r('get',k[4]) or 0) or u)<u then
    r('set',k[4],string.format('%.0f',u))
  else
    r('incr',k[4])
  end
  return r('get',k[4])
end

-- g(m): hands KEY to the first waiter of the queue whose entry has not expired, dropping the
-- expired ones (and any without an entry) on the way, with the TTL that waiter asked for. Wakes
-- that waiter by one item in its wake list (its fencing number, or 1), unless it is m: the
-- caller, who learns it from the reply. Returns the new holder's token and that item, or nil
-- when no live waiter is queued.
local function g(m)
  while true do
    local w=r('lpop',k[2])
    if not w then return end
    local e=r('hget',k[3],w)
    r('hdel',k[3],w)
    if e then
      local x,l,f=string.match(e,'(%d+):(%d+):?(%d?)')
      if tonumber(x)>n then
        local i=s(w,l,f)
        if w~=m then
          -- One item in a fresh list: the waiter's BLPOP returns; the list lives as long as
          -- the lock it announces.
          local q=a[5]..w
          r('del',q)
          r('rpush',q,i)
          r('pexpire',q,l)
        end
        return w,i
      end
    end
  end
end

-- h(i): the answer "held" for the caller, with its fencing number when asked for: i when this
-- call granted it, else the counter's value (no grant came after the one that gave KEY the
-- caller's token, which KEY still holds).
local function h(i)
  local p=r('pttl',k[1])
  if a[6]~='1' then return {1,p} end
  return {1,p,i or r('get',k[4])}
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
  if v==t then return h() end
  return {0,r('pttl',k[1])}
end

-- 't' and 'a'. A free KEY goes to the queue first: the caller takes it only when nobody live
-- is waiting.
local i
if not v then
  v,i=g(t)
  if not v then
    i=s(t,a[3],a[6])
    v=t
  end
end
if v==t then return h(i) end

if o=='a' then
  -- Busy: queue once (a refresh keeps the caller's place), and (re)start the entry's life.
  if not r('hget',k[3],t) then r('rpush',k[2],t) end
  r('hset',k[3],t,(n+a[4])..':'..a[3]..':'..a[6])
  -- BASE:q and BASE:w live at least as long as this entry; only raised, never past the latest
  -- entry's expiry, they vanish by themselves once every entry expired.
  for j=2,3 do
    if r('pttl',k[j])<tonumber(a[4]) then r('pexpire',k[j],a[4]) end
  end
end
return {0,r('pttl',k[1])}
