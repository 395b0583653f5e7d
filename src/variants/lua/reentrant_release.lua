-- Reentrant release (src/variants/reentrant_lock.cpp): leave the lock once.
--
-- KEYS[1]  the hash (see reentrant_acquire.lua)
-- ARGV[1]  the owner id
--
-- Returns:
--   -2      the key is gone (the lock expired)
--   -1      the key is not this owner's (another owner's hash, or a key of another type)
--   count   this owner's count left; 0: the key was deleted, the lock is free
--
-- Names (part of the text sent): k the key, o the owner id, r redis.call, y the key's type, c
-- the count left.
local k,o,r=KEYS[1],ARGV[1],redis.call
local y=r('type',k).ok
if y=='none' then return -2 end
if y~='hash' or r('hexists',k,o)<1 then return -1 end
local c=r('hincrby',k,o,-1)
-- The last leave frees the lock at once, without waiting for the TTL.
if c<1 then r('del',k) end
return c
