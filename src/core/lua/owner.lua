-- The owner script: release, extend and query of the plain lock (src/core/lock.cpp) and of the
-- quorum lock (src/variants/quorum_lock.cpp). One script for all three keeps one entry in the
-- server's script cache and one text in the library; the arguments choose what it does.
--
-- KEYS[1]  the lock's key
-- ARGV[1]  the holder's token; absent: query
-- ARGV[2]  a TTL in ms; absent: release, present: extend
--
-- Returns, with a token:
--   -1  another value holds the key (someone else's lock): nothing is done
--    0  the key is gone (the lock expired): nothing is done
--    1  the key held the token and was deleted (release) or given the TTL (extend)
-- Without a token: {value or false, PTTL}, what the key holds and for how long.
--
-- The compact names are part of the text the library sends (this file, without its comments
-- and with its whitespace collapsed, by scripts/embed-lua.py): k the key, a the arguments, r
-- redis.call, v the key's value. So is each space: none where Lua needs none between two
-- tokens (before `then`, after `return`, around brackets and before `-1`).
local k,a,r=KEYS[1],ARGV,redis.call
-- One GET serves every case: the comparison below reads it instead of a second call. Without a
-- token, the query: read-only, whoever holds the key.
local v=r('get',k)if not a[1]then return{v,r('pttl',k)}end
-- Only the token's holder may touch the key: a holder whose lock expired, and whose key was
-- taken since by another client, must never delete or prolong that client's lock. The check and
-- the write run in one script, so nothing can come between them.
if v~=a[1]then return v and-1 or 0 end
-- Extend with a TTL (PEXPIRE answers 1, the key being there), else release (DEL answers 1). The
-- PEXPIRE's 1 is true in Lua, so `or` never sends the DEL after it.
return a[2]and r('pexpire',k,a[2])or r('del',k)
