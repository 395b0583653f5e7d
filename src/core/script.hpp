// A Lua script as the library sends it (its text and the SHA1 of that text), the size of its
// request, and EVALSHA with EVAL as fallback. Internal: not installed.
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

#include <cstddef>
#include <string_view>

#include "resplock/core/connection.hpp"
#include "resplock/core/resp.hpp"
#include "resplock/core/status.hpp"

namespace resplock::detail {

// The SHA1 names the script in EVALSHA; the text is sent with EVAL when the server's script
// cache lacks it. The integration tests check the SHA1 against the server's own SCRIPT LOAD.
struct Script {
    std::string_view sha1;
    std::string_view text;
};

// Bytes of a decimal number, and of a RESP bulk string of n bytes ($n CRLF data CRLF).
constexpr std::size_t digits(std::size_t n) noexcept {
    return n < 10 ? 1 : 1 + digits(n / 10);
}
constexpr std::size_t bulk_size(std::size_t n) noexcept {
    return 1 + digits(n) + 2 + n + 2;
}

// Bytes of the EVAL form of a script call: the array header, EVAL, the script's text of
// text_len bytes, then `count` more arguments (numkeys, keys, ARGV) whose bulk strings take
// args_bytes together. The EVAL form is the longest request of a script (EVALSHA sends 40 bytes
// instead of the text), so each lock kind sizes its smallest buffer with it, and a call that
// could not send it must not start with EVALSHA (it would work only while the server caches the
// script).
constexpr std::size_t eval_size(std::size_t text_len, std::size_t count,
                                std::size_t args_bytes) noexcept {
    return 1 + digits(2 + count) + 2 + bulk_size(4) + bulk_size(text_len) + args_bytes;
}

// Sends args[0..count) as EVALSHA sha1 args[2..], and as EVAL text args[2..] when the server's
// script cache lacks it (NOSCRIPT). args[0] and args[1] are filled here; args[2] is numkeys.
Status eval(Connection& conn, const Script& script, std::string_view* args, std::size_t count,
            resp::Reply& reply, Deadline deadline) noexcept;

// eval() spelled out in its caller: the plain lock's owner script, whose requests are on the
// deepest call path of the core, saves the frame (and the call) this way.
inline __attribute__((always_inline)) Status eval_inline(Connection& conn, const Script& script,
                                                         std::string_view* args, std::size_t count,
                                                         resp::Reply& reply,
                                                         Deadline deadline) noexcept {
    for (bool by_text = false;; by_text = true) {
        args[0] = {"EVALSHA", by_text ? 4U : 7U};  // EVAL is its prefix
        args[1] = by_text ? script.text : script.sha1;
        const Status s = conn.command(args, count, reply, deadline);
        // NOSCRIPT: the server's script cache is empty (restart, failover, SCRIPT FLUSH): send
        // the text once.
        if (s != Status::no_script || by_text) return s;
    }
}

// Whether the EVAL form of args[0..count) (args[2..] filled) fits the connection's buffer.
inline bool eval_fits(const Connection& conn, const Script& script, const std::string_view* args,
                      std::size_t count) noexcept {
    std::size_t bytes = 0;
    for (std::size_t i = 2; i < count; ++i)
        bytes += bulk_size(args[i].size());
    return eval_size(script.text.size(), count - 2, bytes) <= conn.buffer_size();
}

}  // namespace resplock::detail

#endif  // RESPLOCK_SCRIPT_HPP
