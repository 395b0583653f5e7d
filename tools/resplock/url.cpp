// The URL parser, lists of URLs, the password file and endpoint_from() (see url.hpp).
#include "url.hpp"

#include <errno.h>

#include <algorithm>
#include <cstdio>
#include <cstring>

#include "exit_codes.hpp"
#include "messages.hpp"
#include "text.hpp"

namespace resplock_cli {

namespace {

int hex_value(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

// The user-info before the last '@': a user name and a password, each %XX-decoded.
bool parse_user_info(std::string_view info, Endpoint& ep, const char** why) {
    const std::size_t colon = info.find(':');
    const std::string_view user = slice(info, 0, colon);
    if (!user.empty()) {
        if (!percent_decode(user, ep.username, sizeof ep.username)) {
            *why = "bad user name (too long, a bad %XX escape, or %00)";
            return false;
        }
        ep.has_username = true;
    }
    // An empty password ("redis://:@host") means none, like an absent one.
    if (colon != std::string_view::npos && colon + 1 < info.size()) {
        if (!percent_decode(slice(info, colon + 1), ep.password, sizeof ep.password)) {
            *why = "bad password (too long, a bad %XX escape, or %00)";
            return false;
        }
        ep.has_password = true;
    }
    return true;
}

// The host name or [IPv6 address] at the start of u; leaves u at what follows it.
bool parse_host(std::string_view& u, Endpoint& ep, const char** why) {
    std::string_view host;
    if (!u.empty() && u[0] == '[') {
        const std::size_t close = u.find(']');
        if (close == std::string_view::npos || close == 1) {
            *why = "bad IPv6 address: expected [address]";
            return false;
        }
        host = slice(u, 1, close - 1);
        u.remove_prefix(close + 1);
        if (!u.empty() && u[0] != ':' && u[0] != '/') {
            *why = "unexpected text after ']'";
            return false;
        }
        ep.ipv6 = true;
    } else {
        const std::size_t end = u.find_first_of(":/");
        host = slice(u, 0, end);
        u.remove_prefix(end == std::string_view::npos ? u.size() : end);
    }
    if (host.empty()) {
        *why = "missing host (e.g. redis://127.0.0.1:6379)";
        return false;
    }
    if (host.size() > max_host_len) {
        *why = "host name too long";
        return false;
    }
    const bool bad_char = std::any_of(host.begin(), host.end(), [&ep](char c) {
        return static_cast<unsigned char>(c) <= 0x20 || c == '[' || c == ']' || c == '@' ||
               c == '/' || (!ep.ipv6 && c == ':');
    });
    if (bad_char) {
        *why = "bad character in the host name";
        return false;
    }
    std::memcpy(ep.host, host.data(), host.size());
    ep.host[host.size()] = '\0';
    return true;
}

// What may follow the host: ":port", then "/db" (an empty one is 0), then nothing.
bool parse_port_and_db(std::string_view u, Endpoint& ep, const char** why) {
    if (!u.empty() && u[0] == ':') {
        u.remove_prefix(1);
        const std::size_t end = u.find('/');
        std::uint32_t port = 0;
        if (!parse_number(slice(u, 0, end), 1, 65535, port)) {
            *why = "the port must be a number in 1..65535";
            return false;
        }
        ep.port = static_cast<std::uint16_t>(port);
        u.remove_prefix(end == std::string_view::npos ? u.size() : end);
    }
    if (!u.empty() && u[0] == '/') {
        u.remove_prefix(1);
        if (!u.empty() && !parse_number(u, 0, max_ms, ep.db)) {
            *why = "the database after '/' must be a number";
            return false;
        }
        u = {};
    }
    if (!u.empty()) {
        *why = "unexpected text after the host";
        return false;
    }
    return true;
}

// The sentinels of a redis-sentinel:// URL: host[:port] items separated by commas.
bool parse_sentinels(std::string_view list, Endpoint& ep, const char** why) {
    for (;;) {
        const std::size_t comma = list.find(',');
        std::string_view item = slice(list, 0, comma);
        if (ep.sentinel_count == RESPLOCK_MAX_SENTINELS) {
            *why = "too many sentinels (at most 5)";
            return false;
        }
        Endpoint one;
        one.port = sentinel_default_port;
        if (!parse_host(item, one, why) || !parse_port_and_db(item, one, why)) return false;
        const std::size_t len = std::strlen(one.host);
        if (len > RESPLOCK_MAX_HOST_LEN) {
            *why = "sentinel host name too long";
            return false;
        }
        SentinelAddress& a = ep.sentinels[ep.sentinel_count++];
        std::memcpy(a.host, one.host, len + 1);
        a.port = one.port;
        a.ipv6 = one.ipv6;
        if (comma == std::string_view::npos) return true;
        list.remove_prefix(comma + 1);
    }
}

// What follows the user-info of a redis-sentinel:// URL: the sentinels, maybe "/db", then
// "#MASTERNAME".
bool parse_sentinel_rest(std::string_view u, Endpoint& ep, const char** why) {
    const std::size_t hash = u.find('#');
    if (hash == std::string_view::npos || hash + 1 == u.size()) {
        *why = "a Sentinel URL needs #MASTERNAME at its end";
        return false;
    }
    if (!percent_decode(slice(u, hash + 1), ep.master_name, sizeof ep.master_name)) {
        *why = "bad master name (too long, a bad %XX escape, or %00)";
        return false;
    }
    u = slice(u, 0, hash);
    const std::size_t slash = u.find('/');
    if (!parse_sentinels(slice(u, 0, slash), ep, why)) return false;
    if (slash != std::string_view::npos && !parse_port_and_db(slice(u, slash), ep, why)) {
        return false;
    }
    ep.sentinel = true;
    std::memcpy(ep.host, ep.sentinels[0].host, std::strlen(ep.sentinels[0].host) + 1);
    ep.port = ep.sentinels[0].port;
    ep.ipv6 = ep.sentinels[0].ipv6;
    return true;
}

// The schemes, longest first: "redis-sentinel://" must not be taken for "redis://".
struct Scheme {
    std::string_view prefix;
    bool tls;
    bool sentinel;
};
constexpr Scheme schemes[] = {
    {"rediss-sentinel://", true, true},
    {"redis-sentinel://", false, true},
    {"rediss://", true, false},
    {"redis://", false, false},
};

const Scheme* scheme_of(std::string_view u) {
    // A plain loop: the tool keeps to the C++ headers a static musl build can take.
    for (const Scheme& s : schemes) {
        // cppcheck-suppress useStlAlgorithm
        if (starts_with_nocase(u, s.prefix)) return &s;
    }
    return nullptr;
}

}  // namespace

bool percent_decode(std::string_view in, char* out, std::size_t cap) {
    std::size_t n = 0;
    for (std::size_t i = 0; i < in.size(); ++i) {
        char c = in[i];
        if (c == '%') {
            if (i + 2 >= in.size()) return false;
            const int hi = hex_value(in[i + 1]);
            const int lo = hex_value(in[i + 2]);
            if (hi < 0 || lo < 0) return false;
            c = static_cast<char>(hi * 16 + lo);
            if (c == '\0') return false;
            i += 2;
        }
        if (n + 1 >= cap) return false;
        out[n++] = c;
    }
    out[n] = '\0';
    return true;
}

UrlResult parse_url(const char* url, Endpoint& ep, const char** why) {
    std::string_view u(url);
    const Scheme* scheme = scheme_of(u);
    if (scheme == nullptr) {
        *why =
            "it must start with redis:// or rediss:// (or redis-sentinel://, rediss-sentinel://)";
        return UrlResult::bad;
    }
    ep.tls = scheme->tls;
    u.remove_prefix(scheme->prefix.size());
    // A Sentinel URL ends with its #MASTERNAME (after the user-info); no other fragment.
    if (u.find_first_of(scheme->sentinel ? "?" : "?#") != std::string_view::npos) {
        *why = "query strings and fragments are not supported";
        return UrlResult::bad;
    }
    // The user-info ends at the last '@': a password may contain '/' or '@' unescaped.
    const std::size_t at = u.rfind('@');
    if (at != std::string_view::npos) {
        if (!parse_user_info(slice(u, 0, at), ep, why)) return UrlResult::bad;
        u.remove_prefix(at + 1);
    }
    if (scheme->sentinel) return parse_sentinel_rest(u, ep, why) ? UrlResult::ok : UrlResult::bad;
    if (!parse_host(u, ep, why) || !parse_port_and_db(u, ep, why)) return UrlResult::bad;
    return UrlResult::ok;
}

std::size_t url_list_cut(std::string_view list) {
    for (std::size_t i = list.find(','); i != std::string_view::npos; i = list.find(',', i + 1)) {
        const std::string_view next = slice(list, i + 1);
        if (scheme_of(next) != nullptr) return i;
    }
    return list.size();
}

bool url_list_has_credentials(const char* list) {
    if (list == nullptr) return false;
    std::string_view rest(list);
    while (!rest.empty()) {
        const std::size_t cut = url_list_cut(rest);
        const std::string_view url = slice(rest, 0, cut);
        char text[max_url_len + 1];
        if (url.size() >= sizeof text) return true;
        std::memcpy(text, url.data(), url.size());
        text[url.size()] = '\0';
        Endpoint ep;
        const char* why = "";
        if (parse_url(text, ep, &why) != UrlResult::ok || ep.has_username || ep.has_password ||
            url.find('@') != std::string_view::npos) {
            return true;
        }
        rest.remove_prefix(cut == rest.size() ? cut : cut + 1);
    }
    return false;
}

bool read_password_file(const char* path, Endpoint& ep) {
    std::FILE* f = std::fopen(path, "r");
    if (f == nullptr) {
        report("cannot read password file %s: %s", Masked(path).text, std::strerror(errno));
        return false;
    }
    // The first line, byte by byte (a NUL byte must not end it unseen), up to one byte more than
    // a password and its '\r' may take: more than that is too long.
    char line[max_password_len + 2];
    std::size_t n = 0;
    int c = 0;
    while (n < sizeof line && (c = std::getc(f)) != EOF && c != '\n')
        line[n++] = static_cast<char>(c);
    const bool failed = std::ferror(f) != 0;
    (void)std::fclose(f);
    if (failed) {
        report("cannot read password file %s: read error", Masked(path).text);
        return false;
    }
    if (n > 0 && line[n - 1] == '\r') --n;
    if (n == 0) {
        report("password file %s is empty", Masked(path).text);
        return false;
    }
    if (n > max_password_len) {
        report("password in %s is longer than %zu bytes", Masked(path).text, max_password_len);
        return false;
    }
    if (std::memchr(line, '\0', n) != nullptr) {
        // The library takes the password as a C string: it would end at the NUL, unseen.
        report("password in %s holds a NUL byte", Masked(path).text);
        return false;
    }
    std::memcpy(ep.password, line, n);
    ep.password[n] = '\0';
    ep.has_password = true;
    return true;
}

int endpoint_from(std::string_view url, const char* source, const char* password_file,
                  Endpoint& ep) {
    char text[max_url_len + 1];
    if (url.size() >= sizeof text) {
        report("invalid URL in %s: longer than %zu characters", source, sizeof text - 1);
        return exit_usage;
    }
    std::memcpy(text, url.data(), url.size());
    text[url.size()] = '\0';
    const char* why = "";
    if (parse_url(text, ep, &why) != UrlResult::ok) {
        // Shown so that the mistake can be seen, but masked: a mistyped URL may still hold a
        // password ("redis:secret@host").
        report("invalid URL in %s '%s': %s", source, MaskedUrl(text).text, why);
        return exit_usage;
    }
    if (password_file != nullptr && !read_password_file(password_file, ep)) return exit_usage;
    if (ep.has_username && !ep.has_password) {
        // Refused rather than sent as the default user; redis-cli even reads this form as a
        // password, so the name is not shown.
        report(
            "the URL in %s names a user but no password (redis://user:password@host, or "
            "--password-file)",
            source);
        return exit_usage;
    }
    return -1;
}

namespace {

char lower(char c) {
    return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c;
}

bool same_text_nocase(const char* a, const char* b) {
    for (; *a != '\0' && lower(*a) == lower(*b); ++a, ++b) {
    }
    return *a == '\0' && *b == '\0';
}

bool same_server(const Endpoint& a, const Endpoint& b) {
    return a.sentinel == b.sentinel && a.port == b.port && a.db == b.db &&
           same_text_nocase(a.host, b.host) &&
           (!a.sentinel || std::strcmp(a.master_name, b.master_name) == 0);
}

}  // namespace

int check_distinct(const Endpoint* eps, int count, const char* source) {
    for (int j = 1; j < count; ++j) {
        for (int i = 0; i < j; ++i) {
            if (!same_server(eps[i], eps[j])) continue;
            const Endpoint& e = eps[j];
            char where[max_host_len + 40];
            (void)std::snprintf(where, sizeof where, e.ipv6 ? "[%s]:%u/%u" : "%s:%u/%u", e.host,
                                static_cast<unsigned>(e.port), static_cast<unsigned>(e.db));
            report(
                "the same server twice in %s: %s%s%s%s (URLs %d and %d); a quorum needs "
                "distinct servers",
                source, e.sentinel ? "Sentinel master " : "",
                e.sentinel ? Masked(e.master_name).text : "", e.sentinel ? " via " : "", where,
                i + 1, j + 1);
            return exit_usage;
        }
    }
    return -1;
}

}  // namespace resplock_cli
