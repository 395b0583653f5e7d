// Generated from src/core/lua/*.lua by scripts/embed-lua.py: do not edit.
// Edit the .lua file, run `python3 scripts/embed-lua.py` and commit both; the test
// scripts.embedded_lua fails while this file differs from what the generator makes. Each
// text is its file without comments, every run of whitespace collapsed to one space; the
// SHA1 is the text's (what EVALSHA sends). Script: core/script.hpp.
#ifndef RESPLOCK_CORE_LUA_SCRIPTS_HPP
#define RESPLOCK_CORE_LUA_SCRIPTS_HPP

#include "core/script.hpp"

// clang-format off
namespace resplock::detail {

// src/core/lua/options_acquire.lua (462 bytes)
inline constexpr char options_acquire_sha1[] = "61429715f14556dea4eeee434d0ac26b51123643";
inline constexpr char options_acquire_text[] =
    "pcall(redis.replicate_commands) local k,a,r=KEYS,ARGV,redis.call local o=a[3] and k[2] "
    "local t=o and r('pttl',o) or -2 if t==-2 and r('set',k[1],a[1],'nx','px',a[2]) then if o "
    "then r('set',o,a[1],'px',a[3]) end local f=k[o and 3 or 2] if not f then return 0 end "
    "local s=r('time') local c=s[1]*1000000+s[2] if (tonumber(r('get',f) or 0) or c)<c then "
    "r('set',f,string.format('%.0f',c)) else r('incr',f) end return r('get',f) end return "
    "{math.max(t,r('pttl',k[1]))}";
inline constexpr Script options_acquire_script = {{options_acquire_sha1, 40}, {options_acquire_text, 462}};

// src/core/lua/options_release.lua (160 bytes)
inline constexpr char options_release_sha1[] = "bbdb698c6b97f01e8d686165c74d747ab585f97e";
inline constexpr char options_release_text[] =
    "local k,r=KEYS,redis.call local v=r('get',k[1]) if v~=ARGV[1] then return v and -1 or 0 "
    "end r('del',k[1],k[2]) r('rpush',k[2],1) r('pexpire',k[2],1000) return 1";
inline constexpr Script options_release_script = {{options_release_sha1, 40}, {options_release_text, 160}};

// src/core/lua/owner.lua (181 bytes)
inline constexpr char owner_sha1[] = "23d13ce2ffcb74f3babaff7e5afc9c05b7a72781";
inline constexpr char owner_text[] =
    "local k,a,r=KEYS[1],ARGV,redis.call local v=r('get',k)if not a[1]then "
    "return{v,r('pttl',k)}end if v~=a[1]then return v and-1 or 0 end return a[2]and "
    "r('pexpire',k,a[2])or r('del',k)";
inline constexpr Script owner_script = {{owner_sha1, 40}, {owner_text, 181}};

}  // namespace resplock::detail
// clang-format on

#endif  // RESPLOCK_CORE_LUA_SCRIPTS_HPP
