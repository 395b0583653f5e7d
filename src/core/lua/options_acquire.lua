-- Acquire with options (Lock::options_attempt, src/core/lock.cpp): fencing numbers, once per
-- interval. The plain acquire is a SET NX PX and needs no script; this one runs only when an
-- option asks.
--
-- Companion keys are written KEY:suffix here; see KeyName (resplock/core/companion.hpp) for
-- the real names.
-- KEYS[1]  the lock's key
-- KEYS[2]  KEY:once when once_per_ms is given, else KEY:fence (or absent: no fence)
-- KEYS[3]  KEY:fence when once_per_ms is given (or absent: no fence)
-- ARGV[1]  the token
-- ARGV[2]  the lock's TTL in ms
-- ARGV[3]  once_per_ms: absent unless the lock may be taken only once per interval
--
-- Returns:
--   0              taken, no fence asked for
--   "<digits>"     taken: the fence number, a bulk string (see the end of the grant)
--   {PTTL}         busy: the longer of the lock's and the once-marker's PTTL, the time after
--                  which an attempt may succeed
--
-- Names (part of the text sent): k KEYS, a ARGV, r redis.call, o the marker's key, t its PTTL,
-- f the fence key, s the server's TIME, c that time in microseconds.

-- Redis 3.2 and 4 refuse a write after TIME (a non-deterministic command) unless the script
-- replicates its effects instead of itself; later versions always do. pcall: a version without
-- replicate_commands.
pcall(redis.replicate_commands)
local k,a,r=KEYS,ARGV,redis.call
-- The marker KEY:once exists while the interval since the last grant runs: busy until then.
-- -2 is PTTL's "no such key".
local o=a[3] and k[2]
local t=o and r('pttl',o) or -2
if t==-2 and r('set',k[1],a[1],'nx','px',a[2]) then
  -- Taken. Start the interval: the marker lives once_per_ms, whatever the lock's TTL.
  if o then r('set',o,a[1],'px',a[3]) end
  local f=k[o and 3 or 2]
  if not f then return 0 end
  -- The next fence number: the larger of KEY:fence + 1 and the server's clock in microseconds
  -- (TIME's seconds * 10^6 + microseconds, exact in a Lua double). Starting from the clock
  -- keeps the numbers increasing even after KEY:fence was lost (a restart without persistence,
  -- a failover), within the clock bounds of docs/variants.md, "Fencing numbers".
  local s=r('time')
  local c=s[1]*1000000+s[2]
  -- Below the clock: SET the clock's digits (%.0f: no exponent). At or above it: INCR, since a
  -- counter past 2^53 is beyond a double and INCR keeps it exact. A value that is no number
  -- makes tonumber nil, so c<c is false and INCR refuses it (as it refuses an overflow): an
  -- error reply, never a number that might repeat.
  if (tonumber(r('get',f) or 0) or c)<c then
    r('set',f,string.format('%.0f',c))
  else
    r('incr',f)
  end
  -- Read back as GET, a bulk string: an integer returned from Lua passes through a double.
  return r('get',f)
end
return {math.max(t,r('pttl',k[1]))}
