-- Reentrant acquire (src/variants/reentrant_lock.cpp): take the lock, or enter it again.
--
-- The lock is a hash: one field per owner id, its value how many times that owner entered; and
-- the field "" (no owner id is empty), the largest TTL any holder asked for.
-- KEYS[1]  the hash
-- ARGV[1]  the owner id
-- ARGV[2]  the TTL asked for, in ms
--
-- Returns:
--   PTTL          busy: another owner holds the key (or a key of another type does)
--   {count, TTL}  taken or entered again: this owner's count after it, and the TTL applied
--
-- Names (part of the text sent): k the key, o the owner id, r redis.call, y the key's type, m
-- the TTL applied.
local k,o,r=KEYS[1],ARGV[1],redis.call
-- TYPE first, so that a plain lock's string key on the same name reads as busy rather than as a
-- WRONGTYPE error. .ok: TYPE answers a status reply, a table in Lua.
local y=r('type',k).ok
if y~='none' and (y~='hash' or r('hexists',k,o)<1) then return r('pttl',k) end
-- The key lives as long as the longest TTL any holder asked for: a short re-entry never cuts
-- short a longer hold taken before it.
local m=math.max(ARGV[2],r('hget',k,'') or 0)
r('hset',k,'',m)
r('pexpire',k,m)
return {r('hincrby',k,o,1),m}
