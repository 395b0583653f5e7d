-- Reentrant extend (src/variants/reentrant_lock.cpp): renew the lock's TTL.
--
-- KEYS[1]  the hash (see reentrant_acquire.lua)
-- ARGV[1]  the owner id
-- ARGV[2]  the TTL asked for, in ms
--
-- Returns:
--   -2   the key is gone (the lock expired)
--   -1   the key is not this owner's (another owner's hash, or a key of another type)
--   TTL  the TTL applied: the largest any holder asked for, as in reentrant_acquire.lua
--
-- Names (part of the text sent): k the key, o the owner id, r redis.call, y the key's type, m
-- the TTL applied.
local k,o,r=KEYS[1],ARGV[1],redis.call
local y=r('type',k).ok
if y=='none' then return -2 end
if y~='hash' or r('hexists',k,o)<1 then return -1 end
local m=math.max(ARGV[2],r('hget',k,'') or 0)
r('hset',k,'',m)
r('pexpire',k,m)
return m
