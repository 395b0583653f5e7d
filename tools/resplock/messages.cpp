// report() and the masking of user text in messages (see messages.hpp).
#include "messages.hpp"

#include <algorithm>
#include <cstdarg>
#include <cstdio>

#include "text.hpp"

namespace resplock_cli {

namespace {

// A clean host part: host or [v6 address], then optionally :digits, then optionally /digits.
// Nothing else, so that no password can hide in it.
bool is_clean_host(std::string_view s) {
    std::size_t i = 0;
    if (!s.empty() && s[0] == '[') {
        const std::size_t close = s.find(']');
        if (close == std::string_view::npos) return false;
        for (i = 1; i < close; ++i) {
            if (!is_alnum(s[i]) && s[i] != ':' && s[i] != '.') return false;
        }
        i = close + 1;
    } else {
        while (i < s.size() && (is_alnum(s[i]) || s[i] == '.' || s[i] == '-' || s[i] == '_'))
            ++i;
    }
    if (i < s.size() && s[i] == ':') {
        const std::size_t digits = ++i;
        while (i < s.size() && is_digit(s[i]))
            ++i;
        if (i == digits) return false;
    }
    if (i < s.size() && s[i] == '/') {
        ++i;
        while (i < s.size() && is_digit(s[i]))
            ++i;
    }
    return i == s.size();
}

// The text before a scheme as shown: itself when empty or an option name ("-u", "--url="),
// else "***".
std::string_view shown_prefix(std::string_view prefix) {
    // Dashes, then letters, digits or dashes, then maybe '='.
    std::size_t p = 0;
    while (p < prefix.size() && p < 2 && prefix[p] == '-')
        ++p;
    const bool option = p > 0;
    while (p < prefix.size() && (is_alnum(prefix[p]) || prefix[p] == '-'))
        ++p;
    if (p < prefix.size() && prefix[p] == '=') ++p;
    return prefix.empty() || (option && p == prefix.size()) ? prefix : std::string_view("***");
}

// What follows "://", split for display: the user name when plain (else "***"), what replaces the
// rest of the user-info (":***@", "***@" or nothing), and the host when clean (else "***").
struct ShownAuthority {
    std::string_view user;
    std::string_view info_mark;
    std::string_view host;
};

ShownAuthority shown_authority(std::string_view rest) {
    ShownAuthority shown{{}, {}, rest};
    const std::size_t at = rest.rfind('@');
    if (at != std::string_view::npos) {
        const std::string_view info = slice(rest, 0, at);
        shown.host = slice(rest, at + 1);
        const std::size_t colon = info.find(':');
        if (colon != std::string_view::npos) {
            const std::string_view user = slice(info, 0, colon);
            const bool plain = std::all_of(user.begin(), user.end(), [](char c) {
                return is_alnum(c) || c == '.' || c == '_' || c == '-' || c == '~' || c == '%';
            });
            shown.user = plain ? user : std::string_view("***");
            shown.info_mark = ":***@";
        } else {
            shown.info_mark = "***@";
        }
    }
    if (!is_clean_host(shown.host)) shown.host = "***";
    return shown;
}

}  // namespace

void report(const char* format, ...) {
    char line[1024];
    va_list args;
    va_start(args, format);
    const int n = std::vsnprintf(line, sizeof line, format, args);
    va_end(args);
    if (n < 0) return;
    for (char* p = line; *p != '\0'; ++p) {
        const auto c = static_cast<unsigned char>(*p);
        if (c < 0x20 || c == 0x7f) *p = '?';
    }
    (void)std::fprintf(stderr, "resplock: %s\n", line);
}

void mask_url(std::string_view text, char* out, std::size_t cap) {
    const std::size_t sep = text.find("://");
    if (sep == std::string_view::npos) {
        (void)std::snprintf(out, cap, "%.*s",
                            static_cast<int>(std::min<std::size_t>(text.size(), 300)), text.data());
        return;
    }
    std::size_t begin = sep;
    while (begin > 0 && (is_alnum(text[begin - 1]) || text[begin - 1] == '+' ||
                         text[begin - 1] == '-' || text[begin - 1] == '.')) {
        --begin;
    }
    const std::string_view prefix = shown_prefix(slice(text, 0, begin));
    std::string_view scheme = slice(text, begin, sep - begin);
    if (scheme.size() > 16) scheme = "***";
    const ShownAuthority a = shown_authority(slice(text, sep + 3));
    (void)std::snprintf(out, cap, "%.*s%.*s://%.*s%.*s%.*s", static_cast<int>(prefix.size()),
                        prefix.data(), static_cast<int>(scheme.size()), scheme.data(),
                        static_cast<int>(a.user.size()), a.user.data(),
                        static_cast<int>(a.info_mark.size()), a.info_mark.data(),
                        static_cast<int>(std::min<std::size_t>(a.host.size(), 270)), a.host.data());
}

void mask_bad_url(std::string_view text, char* out, std::size_t cap) {
    if (text.find("://") != std::string_view::npos) {
        mask_url(text, out, cap);
        return;
    }
    // "redis//" (or rediss, redis-sentinel, rediss-sentinel, in any case) at the start is kept:
    // any other name might be a password.
    std::string_view prefix;
    const std::size_t slashes = text.find("//");
    if (slashes != std::string_view::npos) {
        const std::string_view name = slice(text, 0, slashes);
        for (const std::string_view scheme :
             {"redis", "rediss", "redis-sentinel", "rediss-sentinel"}) {
            if (name.size() == scheme.size() && starts_with_nocase(name, scheme))
                prefix = slice(text, 0, slashes + 2);
        }
    }
    std::string_view host = slice(text, prefix.size());
    std::string_view info_mark;
    const std::size_t at = host.rfind('@');
    if (at != std::string_view::npos) {
        info_mark = "***@";
        host.remove_prefix(at + 1);
    }
    if (!is_clean_host(host)) host = "***";
    (void)std::snprintf(out, cap, "%.*s%.*s%.*s", static_cast<int>(prefix.size()), prefix.data(),
                        static_cast<int>(info_mark.size()), info_mark.data(),
                        static_cast<int>(std::min<std::size_t>(host.size(), 270)), host.data());
}

Shown::Shown(std::string_view t) {
    const Masked masked(t);
    (void)std::snprintf(text, sizeof text, "%.40s", masked.text);
}

}  // namespace resplock_cli
