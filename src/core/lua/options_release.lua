-- Release with wake (Lock::release with options, src/core/lock.cpp): the owner script's
-- release, and a wake-up for one waiter blocked on KEY:wake.
--
-- KEYS[1]  the lock's key
-- KEYS[2]  KEY:wake, the list waiters block on with BLPOP (real name: KeyName, companion.hpp)
-- ARGV[1]  the token
--
-- Returns the owner script's answers (src/core/lua/owner.lua):
--   -1  another value holds the key: nothing is done
--    0  the key is gone: nothing is done
--    1  the key held the token and was deleted, and one waiter was woken
--
-- Names (part of the text sent): k KEYS, r redis.call, v the key's value.
local k,r=KEYS,redis.call
local v=r('get',k[1])
if v~=ARGV[1] then return v and -1 or 0 end
-- DEL both: the wake list is made anew with exactly one item, which wakes one waiter blocked in
-- BLPOP, or one about to block. It lives 1 s, so that items never pile up when nobody waits.
r('del',k[1],k[2])
r('rpush',k[2],1)
r('pexpire',k[2],1000)
return 1
