// A Lua script as the library sends it: its text and the SHA1 of that text. Internal: not
// installed.
//
// Each script is a commented file, NAME.lua, next to the code that uses it: src/core/lua/ for the
// core's (the owner script), src/variants/lua/ for the variants'. scripts/embed-lua.py turns each
// folder into a generated header beside it (src/core/lua_scripts.hpp,
// src/variants/lua_scripts.hpp) that defines `Script NAME_script`: the file without comments,
// its whitespace collapsed, and the text's SHA1. The headers are committed, so a build needs no
// generator; the test scripts.embedded_lua fails when one differs from its .lua files. The core's
// header lives in src/core because nothing in src/core includes from another src/ folder.
#ifndef RESPLOCK_SCRIPT_HPP
#define RESPLOCK_SCRIPT_HPP

#include <string_view>

namespace resplock::detail {

// The SHA1 names the script in EVALSHA; the text is sent with EVAL when the server's script
// cache lacks it. The integration tests check the SHA1 against the server's own SCRIPT LOAD.
struct Script {
    std::string_view sha1;
    std::string_view text;
};

}  // namespace resplock::detail

#endif  // RESPLOCK_SCRIPT_HPP
