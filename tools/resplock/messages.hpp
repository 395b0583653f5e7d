// What the tool says on stderr, and what it may show there of the user's text. Every message is
// exactly one line, "resplock: ..." (report()). Text of the user's that a message echoes (an
// option, a URL, KEY, COMMAND, a file name) goes through mask_url() first: when it contains
// "://" it may be a URL carrying a password, or a password typed where a URL belongs, so only
// what is plainly a scheme, a user name and a host is kept. No password ever reaches a message.
#ifndef RESPLOCK_TOOL_MESSAGES_HPP
#define RESPLOCK_TOOL_MESSAGES_HPP

#include <cstddef>
#include <string_view>

namespace resplock_cli {

// Prints "resplock: <message>" as exactly one line on stderr: control characters that might come
// from a key or a server reply are replaced by '?' so that the message cannot span lines.
__attribute__((format(printf, 1, 2))) void report(const char* format, ...);

// Copies user text to out (NUL-terminated, cut to cap) as a message may show it. Text without
// "://" is kept (up to 300 characters). Text with it is shown as scheme://host only: the user
// name and the host stay when they are plainly that, and everything else, password included,
// becomes "***". Text before the scheme stays only when it is an option name ("--url=", "-u").
void mask_url(std::string_view text, char* out, std::size_t cap);

// Text given as a URL that did not parse, as a message may show it. With "://": as mask_url().
// Without (a mistyped scheme: "redis:pw@host", "redis//user:pw@host", "host:port"), a leading
// "redis//" (rediss, redis-sentinel, rediss-sentinel: one of the schemes, in any case) is kept, and
// when an '@' follows, everything from there (or from the start) to the last '@' becomes "***",
// since a password may hide in it; what is left, the host part, is shown when it is plainly
// host[:port][/db], else as "***".
void mask_bad_url(std::string_view text, char* out, std::size_t cap);

// User text as a message may show it (see mask_url).
struct Masked {
    char text[400]{};
    explicit Masked(std::string_view t) { mask_url(t, text, sizeof text); }
};

// A URL that did not parse as a message may show it (see mask_bad_url).
struct MaskedUrl {
    char text[400]{};
    explicit MaskedUrl(std::string_view t) { mask_bad_url(t, text, sizeof text); }
};

// User text as Masked shows it, cut to 40 characters: for text echoed back from a usage error.
struct Shown {
    char text[64]{};
    explicit Shown(std::string_view t);
};

}  // namespace resplock_cli

#endif  // RESPLOCK_TOOL_MESSAGES_HPP
