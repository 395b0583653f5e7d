// Generated from src/variants/lua/*.lua by scripts/embed-lua.py: do not edit.
// Edit the .lua file, run `python3 scripts/embed-lua.py` and commit both; the test
// scripts.embedded_lua fails while this file differs from what the generator makes. Each
// text is its file without comments, every run of whitespace collapsed to one space; the
// SHA1 is the text's (what EVALSHA sends). Script: core/script.hpp.
#ifndef RESPLOCK_VARIANTS_LUA_SCRIPTS_HPP
#define RESPLOCK_VARIANTS_LUA_SCRIPTS_HPP

#include "core/script.hpp"

// clang-format off
namespace resplock::detail {

// src/variants/lua/fair.lua (1397 bytes)
inline constexpr char fair_sha1[] = "5a4fc7e2ab7a23d8dc387fb1dc6fb9adf58e5a39";
inline constexpr char fair_text[] =
    "pcall(redis.replicate_commands) local k,a,r=KEYS,ARGV,redis.call local o,t=a[1],a[2] "
    "local c=r('time') local n=c[1]*1000+math.floor(c[2]/1000) local function s(w,l,f) "
    "r('set',k[1],w,'px',l) if f~='1' then return 1 end local u=c[1]*1000000+c[2] if "
    "(tonumber(r('get',k[4]) or 0) or u)<u then r('set',k[4],string.format('%.0f',u)) else "
    "r('incr',k[4]) end return r('get',k[4]) end local function g(m) while true do local "
    "w=r('lpop',k[2]) if not w then return end local e=r('hget',k[3],w) r('hdel',k[3],w) if e "
    "then local x,l,f=string.match(e,'(%d+):(%d+):?(%d?)') if tonumber(x)>n then local "
    "i=s(w,l,f) if w~=m then local q=a[5]..w r('del',q) r('rpush',q,i) r('pexpire',q,l) end "
    "return w,i end end end end local function h(i) local p=r('pttl',k[1]) if a[6]~='1' then "
    "return {1,p} end return {1,p,i or r('get',k[4])} end local v=r('get',k[1]) if o=='r' then "
    "if v~=t then if not v then g() end return v and -1 or 0 end if not g() then r('del',k[1]) "
    "end return 1 end if o=='l' then r('lrem',k[2],0,t) r('hdel',k[3],t) if v==t then return "
    "h() end return {0,r('pttl',k[1])} end local i if not v then v,i=g(t) if not v then "
    "i=s(t,a[3],a[6]) v=t end end if v==t then return h(i) end if o=='a' then if not "
    "r('hget',k[3],t) then r('rpush',k[2],t) end "
    "r('hset',k[3],t,(n+a[4])..':'..a[3]..':'..a[6]) for j=2,3 do if "
    "r('pttl',k[j])<tonumber(a[4]) then r('pexpire',k[j],a[4]) end end end return "
    "{0,r('pttl',k[1])}";
inline constexpr Script fair_script = {{fair_sha1, 40}, {fair_text, 1397}};

// src/variants/lua/reentrant_acquire.lua (250 bytes)
inline constexpr char reentrant_acquire_sha1[] = "d3bb8a7134ecd71f7dc54ad79459da5cef967ed3";
inline constexpr char reentrant_acquire_text[] =
    "local k,o,r=KEYS[1],ARGV[1],redis.call local y=r('type',k).ok if y~='none' and (y~='hash' "
    "or r('hexists',k,o)<1) then return r('pttl',k) end local "
    "m=math.max(ARGV[2],r('hget',k,'') or 0) r('hset',k,'',m) r('pexpire',k,m) return "
    "{r('hincrby',k,o,1),m}";
inline constexpr Script reentrant_acquire_script = {{reentrant_acquire_sha1, 40}, {reentrant_acquire_text, 250}};

// src/variants/lua/reentrant_extend.lua (236 bytes)
inline constexpr char reentrant_extend_sha1[] = "1c4ae5faf4ddbf4062190d5a5fe147af14bfa90e";
inline constexpr char reentrant_extend_text[] =
    "local k,o,r=KEYS[1],ARGV[1],redis.call local y=r('type',k).ok if y=='none' then return -2 "
    "end if y~='hash' or r('hexists',k,o)<1 then return -1 end local "
    "m=math.max(ARGV[2],r('hget',k,'') or 0) r('hset',k,'',m) r('pexpire',k,m) return m";
inline constexpr Script reentrant_extend_script = {{reentrant_extend_sha1, 40}, {reentrant_extend_text, 236}};

// src/variants/lua/reentrant_query.lua (143 bytes)
inline constexpr char reentrant_query_sha1[] = "fe82d83f63f68afc7821a867fc7865b0c31cb17e";
inline constexpr char reentrant_query_text[] =
    "local k,o,r=KEYS[1],ARGV[1],redis.call local c=0 if o and r('type',k).ok=='hash' then "
    "c=tonumber(r('hget',k,o)) or 0 end return {c,r('pttl',k)}";
inline constexpr Script reentrant_query_script = {{reentrant_query_sha1, 40}, {reentrant_query_text, 143}};

// src/variants/lua/reentrant_release.lua (211 bytes)
inline constexpr char reentrant_release_sha1[] = "344e084f8992ca5ac8c0f4939276a8f416fe8cdf";
inline constexpr char reentrant_release_text[] =
    "local k,o,r=KEYS[1],ARGV[1],redis.call local y=r('type',k).ok if y=='none' then return -2 "
    "end if y~='hash' or r('hexists',k,o)<1 then return -1 end local c=r('hincrby',k,o,-1) if "
    "c<1 then r('del',k) end return c";
inline constexpr Script reentrant_release_script = {{reentrant_release_sha1, 40}, {reentrant_release_text, 211}};

// src/variants/lua/semaphore.lua (2196 bytes)
inline constexpr char semaphore_sha1[] = "1615af72c5860cf0ad6da7e930616991ff7ca40a";
inline constexpr char semaphore_text[] =
    "pcall(redis.replicate_commands) local k,a,r=KEYS,ARGV,redis.call local "
    "o,t,p=a[1],a[2],a[6] local c=r('time') local n=c[1]*1000+math.floor(c[2]/1000) local "
    "u=c[1]*1000000+c[2] r('zremrangebyscore',k[1],'-inf',n) local function f(w,l) "
    "r('zadd',k[1],n+l,w) if (tonumber(r('get',k[2]) or 0) or u)<u then "
    "r('set',k[2],string.format('%.0f',u)) else r('incr',k[2]) end if "
    "r('pttl',k[2])<tonumber(l) then r('pexpire',k[2],l) end return r('get',k[2]) end local "
    "function x() local z=r('zrange',k[1],-1,-1,'withscores') if z[2] then "
    "r('pexpire',k[1],z[2]-n) end end local function g(m) local h,e=0 while true do local "
    "w=r('lindex',k[4],0) if not w then return h,e end local "
    "y,l,q=string.match(r('hget',k[5],w) or '','(%d+):(%d+):(%d+)') if y and tonumber(y)>n "
    "then if r('zcard',k[1])>=tonumber(q) then return h,e end local v=f(w,l) h=h+1 if w==m "
    "then e=v else local d=p..w r('del',d) r('rpush',d,v) r('pexpire',d,l) end end "
    "r('lpop',k[4]) r('hdel',k[5],w) end end local b=r('zscore',k[1],t) if o=='q' then local "
    "s,v=0,r('hvals',k[5]) for i=1,#v do if (tonumber(string.match(v[i],'^%d+')) or 0)>n then "
    "s=s+1 end end return {r('zcard',k[1]),b and b-n or -2,s} end if o=='h' then local "
    "z,s=r('zrange',k[1],a[3],a[3]+a[5]-1,'withscores'),{} for i=1,#z,2 do "
    "s[i]=string.match(z[i],'^([^:]+):%x+$') or '' s[i+1]=z[i+1]-n end return s end if o=='e' "
    "then if not b then return 0 end r('zadd',k[1],'xx',n+a[3],t) if "
    "r('pttl',k[2])<tonumber(a[3]) then r('pexpire',k[2],a[3]) end x() return 1 end if o=='r' "
    "then local d=r('zrem',k[1],t) if g()==0 and d==1 then r('del',k[3]) r('rpush',k[3],1) "
    "r('pexpire',k[3],1000) end x() return d end if b then local e=r('lpop',p..t) or '' "
    "r('del',p..t) return {e,b-n} end if o=='l' then r('lrem',k[4],0,t) r('hdel',k[5],t) end "
    "local h,e=g(t) if not e and o~='l' and r('llen',k[4])==0 and "
    "r('zcard',k[1])<tonumber(a[4]) then e=f(t,a[3]) end if h>0 or e then x() end if e then "
    "return {e,r('zscore',k[1],t)-n} end if o=='a' then if not r('hget',k[5],t) then "
    "r('rpush',k[4],t) end r('hset',k[5],t,(n+a[5])..':'..a[3]..':'..a[4]) for i=4,5 do if "
    "r('pttl',k[i])<tonumber(a[5]) then r('pexpire',k[i],a[5]) end end end local "
    "z=r('zrange',k[1],0,0,'withscores') return z[2] and z[2]-n or -1";
inline constexpr Script semaphore_script = {{semaphore_sha1, 40}, {semaphore_text, 2196}};

}  // namespace resplock::detail
// clang-format on

#endif  // RESPLOCK_VARIANTS_LUA_SCRIPTS_HPP
