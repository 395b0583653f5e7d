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

// src/core/lua/owner.lua (201 bytes)
inline constexpr Script owner_script = {
    "b9f09aef22a6677cd9ff71057c841e654a492713",
    "local k,a,r=KEYS[1],ARGV,redis.call local v=r('get',k) if not a[1] then return "
    "{v,r('pttl',k)} end if v~=a[1] then return v and -1 or 0 end if a[2] then return "
    "r('pexpire',k,a[2]) end return r('del',k)"};

}  // namespace resplock::detail
// clang-format on

#endif  // RESPLOCK_CORE_LUA_SCRIPTS_HPP
