-- Reentrant query (src/variants/reentrant_lock.cpp): who holds the lock and for how long.
-- Read-only.
--
-- KEYS[1]  the hash (see reentrant_acquire.lua)
-- ARGV[1]  an owner id, or absent
--
-- Returns {count, PTTL}: how many times ARGV[1] entered (0 without it, or when the key is no
-- hash), and the key's PTTL (-2: no key).
--
-- Names (part of the text sent): k the key, o the owner id, r redis.call, c the count.
local k,o,r=KEYS[1],ARGV[1],redis.call
local c=0
if o and r('type',k).ok=='hash' then c=tonumber(r('hget',k,o)) or 0 end
return {c,r('pttl',k)}
