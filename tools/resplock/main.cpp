// resplock: the command-line tool. Takes, releases, extends and inspects one lock on a Redis
// server, and runs a command while holding one, renewing it until the command ends. Exit codes
// follow sysexits(3) so that shell scripts can tell "busy" from "server down" (see usage()).
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#ifdef __linux__
#include <dirent.h>
#include <sys/prctl.h>
#include <sys/timerfd.h>
#endif

#include <pthread.h>

#include <algorithm>
#include <atomic>
#include <cstdarg>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <optional>
#include <string_view>

#include "resplock/core/config.h"
#include "resplock/core/connection.hpp"
#include "resplock/core/lock.hpp"
#include "resplock/core/status.hpp"
#include "resplock/ports/posix.h"
#include "resplock/posix/renewer_thread.hpp"
#include "resplock/variants/lock_options.hpp"
#include "resplock/variants/quorum_lock.hpp"
#include "resplock/variants/reentrant_lock.hpp"
#include "resplock/variants/renewer.hpp"
#include "resplock/version.h"
#ifdef RESPLOCK_CLI_TLS
#include "resplock/ports/mbedtls.h"
#endif

namespace {

using resplock::Status;

// Exit codes. Scripts depend on them: never renumber.
constexpr int exit_ok = 0;
constexpr int exit_not_owner = 1;     // release/extend: token does not own KEY; status: free
constexpr int exit_usage = 64;        // EX_USAGE
constexpr int exit_unavailable = 69;  // EX_UNAVAILABLE: server unreachable, timeout, link lost
constexpr int exit_lost = 70;         // run: the lock was lost while COMMAND ran
constexpr int exit_io = 74;           // EX_IOERR: the token could not be written to stdout
constexpr int exit_busy = 75;         // EX_TEMPFAIL: lock busy
constexpr int exit_protocol = 76;     // EX_PROTOCOL: malformed or unexpected reply
constexpr int exit_denied = 77;       // EX_NOPERM: authentication or permission refused
constexpr int exit_cannot_run = 126;  // run: COMMAND found but could not be started
constexpr int exit_not_found = 127;   // run: COMMAND not found

constexpr const char version_text[] = "resplock " RESPLOCK_VERSION "\n";
constexpr const char default_url[] = "redis://127.0.0.1:6379";
constexpr std::uint32_t max_ms = resplock::max_ttl_ms;  // largest TTL, wait or timeout
constexpr std::size_t max_host_len = 255;
constexpr std::size_t max_user_len = 128;
constexpr std::size_t max_password_len = 256;
constexpr std::size_t server_text_max = 200;  // characters of a server error message shown
constexpr const char insecure_flag[] = "insecure-skip-tls-verify";

// The connection buffer: holds one request, then its reply (the acquisition options' requests
// are the longest).
char io_buffer[1024];  // NOLINT(cppcoreguidelines-avoid-non-const-global-variables): no heap

// ---------------------------------------------------------------------------------------------
// Messages

// Prints "resplock: <message>" as exactly one line on stderr: control characters that might come
// from a key or a server reply are replaced so that the message cannot span lines.
__attribute__((format(printf, 1, 2))) void report(const char* format, ...) {
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

void usage(std::FILE* out) {
    (void)std::fputs(
        "Usage: resplock [OPTIONS] COMMAND ...\n"
        "\n"
        "A lock shared by every host that reaches one Redis server, for shell scripts and cron\n"
        "jobs (like flock(1), but across machines). The Redis key is exactly KEY.\n"
        "\n"
        "Commands:\n"
        "  acquire KEY              take the lock and print its token on stdout (with --fence:\n"
        "                           TOKEN FENCE); the lock stays until its TTL ends or it is\n"
        "                           released with the token\n"
        "  release KEY TOKEN        release the lock, only if TOKEN still owns it\n"
        "  extend KEY TOKEN         reset the lock's TTL to --ttl, only if TOKEN still owns it\n"
        "  status KEY               print \"held <remaining-ms>\" or \"free\"\n"
        "  run KEY -- COMMAND [ARG...]\n"
        "                           take the lock, run COMMAND while holding it (renewed every\n"
        "                           ttl/3), and exit with COMMAND's status (128+N if it died of\n"
        "                           signal N). COMMAND runs in a process group of its own; the\n"
        "                           lock is released only once COMMAND and every process it\n"
        "                           started that stayed in that group (background jobs\n"
        "                           included) have ended. A process that leaves the group\n"
        "                           (setsid, setpgid, daemons) is neither waited for nor stopped.\n"
        "                           COMMAND sees RESPLOCK_KEY and RESPLOCK_TOKEN (and\n"
        "                           RESPLOCK_FENCE with --fence), and REDIS_URL only if no URL in\n"
        "                           it carries a password.\n"
        "                           SIGINT, SIGTERM and SIGHUP sent to resplock go to the group.\n"
        "                           If the lock is lost, the group gets SIGTERM, then SIGKILL\n"
        "                           after a grace of min(2 s, TTL/4), all before the lock's\n"
        "                           validity ends (SIGKILL at once if the key is already gone or\n"
        "                           taken). If resplock dies (even of SIGKILL) or is stopped\n"
        "                           until the validity ends, the group is killed.\n"
        "                           On a terminal, COMMAND gets the foreground; job control\n"
        "                           (Ctrl-Z) is not supported.\n"
        "\n"
        "Options (before or after the command; --opt=value works too):\n"
        "  -u, --url URL            redis://[[user]:password@]host[:port][/db]\n"
        "                           (IPv6: redis://[::1]:6379; %XX escapes in user and password)\n"
        "                           rediss://... is the same over TLS (needs --cacert)\n"
        "                           default: $REDIS_URL, else redis://127.0.0.1:6379\n"
        "                           Several URLs (--url given up to 5 times, or one value with\n"
        "                           URLs separated by commas) make a quorum lock (Redlock): held\n"
        "                           only while a majority of those independent servers hold it\n"
        "      --password-file PATH read the password from the first line of PATH (keeps it out\n"
        "                           of ps); overrides a password in the URL(s)\n"
        "      --ttl MS             lock time-to-live in milliseconds (1..2147483647)\n"
        "                           default: 30000\n"
        "      --wait MS            how long acquire and run wait for a busy lock\n"
        "                           default: 0 (a single attempt)\n"
        "      --timeout MS         connect and per-command I/O timeout (1..2147483647)\n"
        "                           default: 2000\n"
        "One server only (not with several URLs):\n"
        "      --fence              acquire/run: also take a fencing number, strictly increasing\n"
        "                           per KEY (counter KEY:fence); give it to the resource you\n"
        "                           protect so that it can refuse a holder whose lock expired\n"
        "      --once-per MS        acquire/run: at most once per MS by anyone: busy (75) until\n"
        "                           MS have passed since the last acquisition, even if it was\n"
        "                           released early (marker KEY:once, on the server's clock)\n"
        "      --wake               wait by blocking on KEY:wake (BLPOP) instead of polling, and\n"
        "                           wake a waiter on release; every party should use it\n"
        "TLS (rediss:// only; the server's certificate is always verified):\n"
        "      --cacert FILE        CA certificate(s), PEM or DER, that must have signed the\n"
        "                           server's certificate (e.g. "
        "/etc/ssl/certs/ca-certificates.crt)\n"
        "      --cert FILE          client certificate, for servers that require one\n"
        "      --key FILE           the client certificate's private key (unencrypted)\n"
        "      --tls-server-name NAME\n"
        "                           name the server's certificate must carry (default: the host\n"
        "                           of the URL; an IP address must be in its subjectAltName)\n"
        "      --insecure-skip-tls-verify\n"
        "                           DANGEROUS: do not verify the server's certificate at all;\n"
        "                           anyone on the network path can then impersonate the server\n"
        "                           and read the password. Prints a warning on every use.\n"
#ifndef RESPLOCK_CLI_TLS
        "                           (this build has no TLS support: rediss:// is refused)\n"
#endif
        "\n"
        "  -h, --help               show this help and exit\n"
        "      --version            show the version and exit\n"
        "\n"
        "Exit status:\n"
        "    0  done (status: the lock is held)\n"
        "    1  release/extend: TOKEN does not own KEY (expired or taken); status: free\n"
        "   64  usage error (unknown option, missing or extra argument, bad number, bad key)\n"
        "   69  server unreachable, connection lost or timed out, or unable to serve\n"
        "       the lock now (loading, running a script, out of memory, read-only replica)\n"
        "   70  run: the lock was lost while COMMAND ran; COMMAND's group was stopped\n"
        "   74  acquire: the token could not be written to stdout (the lock is released)\n"
        "   75  the lock is busy: not acquired within --wait\n"
        "   76  protocol error or unexpected reply from the server\n"
        "   77  authentication or permission refused; TLS: the server's certificate\n"
        "       failed verification\n"
        "  126  run: COMMAND was found but could not be started\n"
        "  127  run: COMMAND not found\n"
        "  any other: run: COMMAND's own exit status\n"
        "\n"
        "Examples:\n"
        "  # a cron job that must never run twice at once, on any host:\n"
        "  resplock --wait 60000 run nightly-backup -- /usr/local/bin/backup.sh\n"
        "\n"
        "  # at most once an hour across the fleet, whoever gets there first:\n"
        "  resplock --once-per 3600000 run hourly-report -- ./report.sh\n"
        "\n"
        "  # take the lock in one step and release it in another:\n"
        "  token=$(resplock --ttl 120000 acquire deploy) || exit\n"
        "  ./deploy.sh\n"
        "  resplock release deploy \"$token\"\n",
        out);
}

// ---------------------------------------------------------------------------------------------
// Numbers and the URL

// Decimal digits only: no sign, no blanks, no trailing junk, within [lo, hi].
bool parse_number(std::string_view text, std::uint32_t lo, std::uint32_t hi, std::uint32_t& out) {
    if (text.empty()) return false;
    std::uint64_t v = 0;
    for (const char c : text) {
        if (c < '0' || c > '9') return false;
        v = v * 10U + static_cast<std::uint64_t>(c - '0');
        if (v > hi) return false;
    }
    if (v < lo) return false;
    out = static_cast<std::uint32_t>(v);
    return true;
}

bool parse_number(const char* text, std::uint32_t lo, std::uint32_t hi, std::uint32_t& out) {
    return text != nullptr && parse_number(std::string_view(text), lo, hi, out);
}

struct Endpoint {
    char host[max_host_len + 1] = "127.0.0.1";
    std::uint16_t port = 6379;
    bool ipv6 = false;  // host is an IPv6 literal: shown in brackets
    bool tls = false;   // rediss://
    char username[max_user_len + 1] = "";
    bool has_username = false;
    char password[max_password_len + 1] = "";
    bool has_password = false;
    std::uint32_t db = 0;
};

int hex_value(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

// %XX-decodes `in` into out (NUL-terminated, at most cap - 1 bytes). A decoded NUL is refused:
// the library takes credentials as C strings.
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

bool starts_with_nocase(std::string_view s, std::string_view prefix) {
    if (s.size() < prefix.size()) return false;
    for (std::size_t i = 0; i < prefix.size(); ++i) {
        char c = s[i];
        if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
        if (c != prefix[i]) return false;
    }
    return true;
}

bool is_digit(char c) {
    return c >= '0' && c <= '9';
}

bool is_alnum(char c) {
    return is_digit(c) || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

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

// Copies user text (an option, a URL, a key, a file name...) to out for a message. Text with
// "://" in it may be a URL that carries a password, or a password typed where a URL belongs, so
// it is shown as scheme://host only: the user name and the host stay when they are plainly
// that, and everything else, password included, becomes "***". Text before the scheme stays
// only when it is an option name ("--url=").
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
    const std::string_view prefix = text.substr(0, begin);
    std::string_view scheme = text.substr(begin, sep - begin);
    if (scheme.size() > 16) scheme = "***";
    // "-u", "--url=": dashes, then letters, digits or dashes, then maybe '='.
    std::size_t p = 0;
    while (p < prefix.size() && p < 2 && prefix[p] == '-')
        ++p;
    const bool option = p > 0;
    while (p < prefix.size() && (is_alnum(prefix[p]) || prefix[p] == '-'))
        ++p;
    if (p < prefix.size() && prefix[p] == '=') ++p;
    const std::string_view shown_prefix =
        prefix.empty() || (option && p == prefix.size()) ? prefix : std::string_view("***");

    const std::string_view rest = text.substr(sep + 3);
    const std::size_t at = rest.rfind('@');
    std::string_view user;
    std::string_view info_mark;  // what replaces the user-info
    std::string_view host = rest;
    if (at != std::string_view::npos) {
        const std::string_view info = rest.substr(0, at);
        host = rest.substr(at + 1);
        const std::size_t colon = info.find(':');
        if (colon != std::string_view::npos) {
            user = info.substr(0, colon);
            const bool plain = std::all_of(user.begin(), user.end(), [](char c) {
                return is_alnum(c) || c == '.' || c == '_' || c == '-' || c == '~' || c == '%';
            });
            if (!plain) user = "***";
            info_mark = ":***@";
        } else {
            info_mark = "***@";
        }
    }
    if (!is_clean_host(host)) host = "***";
    (void)std::snprintf(out, cap, "%.*s%.*s://%.*s%.*s%.*s", static_cast<int>(shown_prefix.size()),
                        shown_prefix.data(), static_cast<int>(scheme.size()), scheme.data(),
                        static_cast<int>(user.size()), user.data(),
                        static_cast<int>(info_mark.size()), info_mark.data(),
                        static_cast<int>(std::min<std::size_t>(host.size(), 270)), host.data());
}

// User text as a message may show it (see mask_url): a URL typed in the wrong place keeps its
// password hidden. Shown cuts it to 40 characters, for text echoed back from a usage error.
struct Masked {
    char text[400]{};
    explicit Masked(std::string_view t) { mask_url(t, text, sizeof text); }
};
struct Shown {
    char text[64]{};
    explicit Shown(std::string_view t) {
        const Masked masked(t);
        (void)std::snprintf(text, sizeof text, "%.40s", masked.text);
    }
};

enum class UrlResult { ok, bad };

// Parses redis[s]://[[user]:password@]host[:port][/db] into ep. On `bad`, *why says what is
// wrong.
UrlResult parse_url(const char* url, Endpoint& ep, const char** why) {
    std::string_view u(url);
    if (starts_with_nocase(u, "rediss://")) {
        ep.tls = true;
        u.remove_prefix(9);
    } else if (starts_with_nocase(u, "redis://")) {
        u.remove_prefix(8);
    } else {
        *why = "it must start with redis:// or rediss://";
        return UrlResult::bad;
    }
    if (u.find_first_of("?#") != std::string_view::npos) {
        *why = "query strings and fragments are not supported";
        return UrlResult::bad;
    }
    // The user-info ends at the last '@': a password may contain '/' or '@' unescaped.
    const std::size_t at = u.rfind('@');
    if (at != std::string_view::npos) {
        const std::string_view info = u.substr(0, at);
        u.remove_prefix(at + 1);
        const std::size_t colon = info.find(':');
        const std::string_view user = info.substr(0, colon);
        if (!user.empty()) {
            if (!percent_decode(user, ep.username, sizeof ep.username)) {
                *why = "bad user name (too long, a bad %XX escape, or %00)";
                return UrlResult::bad;
            }
            ep.has_username = true;
        }
        // An empty password ("redis://:@host") means none, like an absent one.
        if (colon != std::string_view::npos && colon + 1 < info.size()) {
            if (!percent_decode(info.substr(colon + 1), ep.password, sizeof ep.password)) {
                *why = "bad password (too long, a bad %XX escape, or %00)";
                return UrlResult::bad;
            }
            ep.has_password = true;
        }
    }
    // host, [v6], then :port and /db.
    std::string_view host;
    if (!u.empty() && u[0] == '[') {
        const std::size_t close = u.find(']');
        if (close == std::string_view::npos || close == 1) {
            *why = "bad IPv6 address: expected [address]";
            return UrlResult::bad;
        }
        host = u.substr(1, close - 1);
        u.remove_prefix(close + 1);
        if (!u.empty() && u[0] != ':' && u[0] != '/') {
            *why = "unexpected text after ']'";
            return UrlResult::bad;
        }
        ep.ipv6 = true;
    } else {
        const std::size_t end = u.find_first_of(":/");
        host = u.substr(0, end);
        u.remove_prefix(end == std::string_view::npos ? u.size() : end);
    }
    if (host.empty()) {
        *why = "missing host (e.g. redis://127.0.0.1:6379)";
        return UrlResult::bad;
    }
    if (host.size() > max_host_len) {
        *why = "host name too long";
        return UrlResult::bad;
    }
    const bool bad_char = std::any_of(host.begin(), host.end(), [&ep](char c) {
        return static_cast<unsigned char>(c) <= 0x20 || c == '[' || c == ']' || c == '@' ||
               c == '/' || (!ep.ipv6 && c == ':');
    });
    if (bad_char) {
        *why = "bad character in the host name";
        return UrlResult::bad;
    }
    std::memcpy(ep.host, host.data(), host.size());
    ep.host[host.size()] = '\0';
    if (!u.empty() && u[0] == ':') {
        u.remove_prefix(1);
        const std::size_t end = u.find('/');
        std::uint32_t port = 0;
        if (!parse_number(u.substr(0, end), 1, 65535, port)) {
            *why = "the port must be a number in 1..65535";
            return UrlResult::bad;
        }
        ep.port = static_cast<std::uint16_t>(port);
        u.remove_prefix(end == std::string_view::npos ? u.size() : end);
    }
    if (!u.empty() && u[0] == '/') {
        u.remove_prefix(1);
        if (!u.empty() && !parse_number(u, 0, max_ms, ep.db)) {
            *why = "the database after '/' must be a number";
            return UrlResult::bad;
        }
        u = {};
    }
    if (!u.empty()) {
        *why = "unexpected text after the host";
        return UrlResult::bad;
    }
    return UrlResult::ok;
}

// Reads the first line of `path` (without its line end) as the password.
bool read_password_file(const char* path, Endpoint& ep) {
    std::FILE* f = std::fopen(path, "r");
    if (f == nullptr) {
        report("cannot read password file %s: %s", Masked(path).text, std::strerror(errno));
        return false;
    }
    char line[max_password_len + 3];
    const bool got = std::fgets(line, sizeof line, f) != nullptr;
    const bool failed = std::ferror(f) != 0;
    (void)std::fclose(f);
    if (failed) {
        report("cannot read password file %s: read error", Masked(path).text);
        return false;
    }
    std::size_t n = got ? std::strlen(line) : 0;
    const bool whole_line = n > 0 && line[n - 1] == '\n';
    if (whole_line) --n;
    if (n > 0 && line[n - 1] == '\r') --n;
    if (n == 0) {
        report("password file %s is empty", Masked(path).text);
        return false;
    }
    if (n > max_password_len || (!whole_line && n == sizeof line - 1)) {
        report("password in %s is longer than %zu bytes", Masked(path).text, max_password_len);
        return false;
    }
    std::memcpy(ep.password, line, n);
    ep.password[n] = '\0';
    ep.has_password = true;
    return true;
}

// ---------------------------------------------------------------------------------------------
// Command line

enum class Command { none, acquire, release, extend, status, run };

struct Options {
    std::string_view urls[RESPLOCK_MAX_SERVERS];  // --url, each given or comma-separated
    int url_count = 0;
    const char* password_file = nullptr;
    const char* cacert = nullptr;  // TLS: --cacert, --cert, --key, --tls-server-name
    const char* cert = nullptr;
    const char* key = nullptr;
    const char* tls_server_name = nullptr;
    bool insecure = false;  // --insecure-skip-tls-verify
    std::uint32_t ttl_ms = 30000;
    std::uint32_t wait_ms = 0;
    std::uint32_t timeout_ms = 2000;
    bool fence = false;             // --fence
    std::uint32_t once_per_ms = 0;  // --once-per
    bool wake = false;              // --wake
    Command command = Command::none;
    const char* command_name = "";
    const char* operands[3] = {};  // KEY [TOKEN]: positionals after the command
    int operand_count = 0;
    char** run_argv = nullptr;  // run: COMMAND [ARGS...]
    Masked key_shown{""};       // KEY as messages show it
};

Command command_from(const char* name) {
    const std::string_view n(name);
    if (n == "acquire") return Command::acquire;
    if (n == "release") return Command::release;
    if (n == "extend") return Command::extend;
    if (n == "status") return Command::status;
    if (n == "run") return Command::run;
    return Command::none;
}

// Where the first URL of a list ends: at the first comma followed by redis:// or rediss:// (a
// comma elsewhere, as in a password, is kept), else at the end.
std::size_t url_list_cut(std::string_view list) {
    for (std::size_t i = list.find(','); i != std::string_view::npos; i = list.find(',', i + 1)) {
        const std::string_view next = list.substr(i + 1);
        if (starts_with_nocase(next, "redis://") || starts_with_nocase(next, "rediss://")) return i;
    }
    return list.size();
}

// Adds the URLs of one --url value (or of REDIS_URL): one URL, or several separated by commas,
// each starting with redis:// or rediss://.
bool add_urls(Options& o, const char* value) {
    std::string_view rest(value);
    for (;;) {
        const std::size_t cut = url_list_cut(rest);
        if (o.url_count == RESPLOCK_MAX_SERVERS) {
            report("too many servers: at most %d URLs (a quorum lock over up to %d servers)",
                   RESPLOCK_MAX_SERVERS, RESPLOCK_MAX_SERVERS);
            return false;
        }
        o.urls[o.url_count++] = rest.substr(0, cut);
        if (cut == rest.size()) return true;
        rest.remove_prefix(cut + 1);
    }
}

// Values an option takes; `value` is null when the option was not given one.
bool apply_option(Options& o, std::string_view name, const char* value) {
    std::uint32_t* number = nullptr;
    std::uint32_t lo = 1;
    if (name == "ttl") {
        number = &o.ttl_ms;
    } else if (name == "wait") {
        number = &o.wait_ms;
        lo = 0;
    } else if (name == "timeout") {
        number = &o.timeout_ms;
    } else if (name == "once-per") {
        number = &o.once_per_ms;
    } else if (name == "url") {
        return add_urls(o, value);
    } else if (name == "password-file") {
        if (*value == '\0') {
            report("--password-file needs a file name");
            return false;
        }
        o.password_file = value;
        return true;
    } else if (name == "cacert" || name == "cert" || name == "key" || name == "tls-server-name") {
        if (*value == '\0') {
            report("--%.*s needs a value", static_cast<int>(name.size()), name.data());
            return false;
        }
        (name == "cacert" ? o.cacert
         : name == "cert" ? o.cert
         : name == "key"  ? o.key
                          : o.tls_server_name) = value;
        return true;
    }
    if (!parse_number(value, lo, max_ms, *number)) {
        report("--%.*s: expected a whole number of milliseconds in %u..%u, got '%s'",
               static_cast<int>(name.size()), name.data(), lo, max_ms, Shown(value).text);
        return false;
    }
    return true;
}

bool takes_value(std::string_view name) {
    return name == "url" || name == "password-file" || name == "ttl" || name == "wait" ||
           name == "timeout" || name == "cacert" || name == "cert" || name == "key" ||
           name == "tls-server-name" || name == "once-per";
}

// Options that take no value.
bool* flag_of(Options& o, std::string_view name) {
    if (name == insecure_flag) return &o.insecure;
    if (name == "fence") return &o.fence;
    if (name == "wake") return &o.wake;
    return nullptr;
}

// Adds one positional argument. For run, the first one after KEY starts COMMAND.
bool add_operand(Options& o, int argc, char** argv, int& i) {
    const char* arg = argv[i];
    if (o.command == Command::none) {
        o.command = command_from(arg);
        o.command_name = arg;
        if (o.command == Command::none) {
            report("unknown command '%s' (try 'resplock --help')", Shown(arg).text);
            return false;
        }
        return true;
    }
    if (o.command == Command::run && o.operand_count == 1) {
        // COMMAND starts after KEY, past a "--" right after KEY: that one is always the separator.
        if (std::strcmp(arg, "--") == 0) ++i;
        if (i < argc) o.run_argv = argv + i;
        i = argc;
        return true;
    }
    if (o.operand_count == 3) {
        report("%s: too many arguments (try 'resplock --help')", o.command_name);
        return false;
    }
    o.operands[o.operand_count++] = arg;
    return true;
}

// Returns -1 to go on, else the exit code (0 after --help or --version).
int parse_args(int argc, char** argv, Options& o) {
    int i = 1;
    for (; i < argc; ++i) {
        const char* arg = argv[i];
        if (std::strcmp(arg, "--") == 0) {
            if (o.command == Command::run && o.operand_count == 1) {
                // The separator right after KEY: COMMAND is what follows, even another "--".
                if (i + 1 < argc) o.run_argv = argv + i + 1;
                break;
            }
            // The rest are operands; for run, COMMAND starts after KEY (and its separator).
            for (++i; i < argc; ++i) {
                if (!add_operand(o, argc, argv, i)) return exit_usage;
            }
            break;
        }
        if (arg[0] != '-' || arg[1] == '\0') {
            if (!add_operand(o, argc, argv, i)) return exit_usage;
            continue;
        }
        std::string_view name;
        const char* value = nullptr;
        if (arg[1] == '-') {
            name = arg + 2;
            const std::size_t eq = name.find('=');
            if (eq != std::string_view::npos) {
                value = arg + 2 + eq + 1;
                name = name.substr(0, eq);
            }
        } else if (arg[1] == 'u') {
            name = "url";
            if (arg[2] != '\0') value = arg + 2;
        } else if (arg[1] == 'h' && arg[2] == '\0') {
            name = "help";
        } else {
            report("unknown option '%s' (try 'resplock --help')", Shown(arg).text);
            return exit_usage;
        }
        if (name == "help" || name == "version") {
            if (value != nullptr) {
                report("--%.*s takes no value", static_cast<int>(name.size()), name.data());
                return exit_usage;
            }
            if (name == "help") {
                usage(stdout);
            } else {
                (void)std::fputs(version_text, stdout);
            }
            return std::fflush(stdout) == 0 ? exit_ok : exit_io;
        }
        if (bool* flag = flag_of(o, name); flag != nullptr) {
            if (value != nullptr) {
                report("--%.*s takes no value", static_cast<int>(name.size()), name.data());
                return exit_usage;
            }
            *flag = true;
            continue;
        }
        if (!takes_value(name)) {
            report("unknown option '%s' (try 'resplock --help')", Shown(arg).text);
            return exit_usage;
        }
        if (value == nullptr) {
            if (i + 1 >= argc) {
                report("option %s needs a value", Shown(arg).text);
                return exit_usage;
            }
            value = argv[++i];
        }
        if (!apply_option(o, name, value)) return exit_usage;
    }

    if (o.command == Command::none) {
        report("missing command: acquire, release, extend, status or run (try 'resplock --help')");
        return exit_usage;
    }
    const bool needs_token = o.command == Command::release || o.command == Command::extend;
    const int wanted = needs_token ? 2 : 1;
    if (o.operand_count < wanted) {
        report("%s: missing %s (try 'resplock --help')", o.command_name,
               o.operand_count == 0 ? "KEY" : "TOKEN");
        return exit_usage;
    }
    if (o.operand_count > wanted) {
        report("%s: too many arguments (try 'resplock --help')", o.command_name);
        return exit_usage;
    }
    if (o.command == Command::run && o.run_argv == nullptr) {
        report("run: missing COMMAND after KEY (resplock run KEY -- COMMAND [ARGS...])");
        return exit_usage;
    }
    const std::size_t key_len = std::strlen(o.operands[0]);
    if (key_len == 0) {
        report("%s: KEY must not be empty", o.command_name);
        return exit_usage;
    }
    if (key_len > RESPLOCK_MAX_KEY_LEN) {
        report("%s: KEY is %zu bytes long; at most %d are accepted", o.command_name, key_len,
               RESPLOCK_MAX_KEY_LEN);
        return exit_usage;
    }
    o.key_shown = Masked(o.operands[0]);
    if (needs_token) {
        const std::size_t token_len = std::strlen(o.operands[1]);
        if (token_len == 0 || token_len > resplock::max_token_len) {
            report("%s %s: TOKEN must be 1..%zu characters (as printed by 'resplock acquire')",
                   o.command_name, o.key_shown.text, resplock::max_token_len);
            return exit_usage;
        }
    }
    return -1;
}

// ---------------------------------------------------------------------------------------------
// Statuses

int exit_code(Status s) {
    switch (s) {
        case Status::ok:
            return exit_ok;
        case Status::not_owner:
        case Status::expired:
            return exit_not_owner;
        case Status::busy:
            return exit_busy;
        case Status::invalid_argument:
            return exit_usage;
        case Status::timeout:
        case Status::no_host:
        case Status::connect_failed:
        case Status::closed:
        case Status::io_error:
        case Status::unknown_outcome:
        // A server that cannot serve the lock now, though it answered: retrying later may work.
        case Status::loading:
        case Status::server_busy:
        case Status::out_of_memory:
        case Status::read_only:
        case Status::random_failed:  // cannot happen with getrandom(); nothing was sent
            return exit_unavailable;
        case Status::auth_required:
        case Status::auth_failed:
        case Status::no_permission:
            return exit_denied;
        case Status::incomplete:
        case Status::protocol_error:
        case Status::too_large:
        case Status::server_error:
        case Status::no_script:
        case Status::wrong_type:
            return exit_protocol;
    }
    return exit_protocol;
}

// What the tool talks to, for messages ("127.0.0.1:6379", "[::1]:6379"; never the password).
struct Target {
    const char* host;
    char where[max_host_len + 16];  // a quorum's list of servers is cut to fit
    std::uint32_t timeout_ms;
    const resplock::Connection* conn;  // for the server's error text
#ifdef RESPLOCK_CLI_TLS
    const resplock_mbedtls_t* tls;  // rediss://: why a TLS connection failed
    bool client_cert;               // --cert given
#endif
};

// Redis 7.0 answers a command that the lock's script calls but the user's ACL lacks with a plain
// "ERR The user executing the script can't run this command ...": a permission problem.
bool refused_in_script(Status s, const Target& t) {
    return s == Status::server_error && t.conn != nullptr &&
           t.conn->error_text().find("The user executing the script can't run") !=
               std::string_view::npos;
}

// The exit code of a failed call: a server certificate that failed verification is refused
// authentication (77), not a server that is merely unavailable.
int exit_for(Status s, const Target& t) {
    if (refused_in_script(s, t)) return exit_denied;
#ifdef RESPLOCK_CLI_TLS
    if (t.tls != nullptr && resplock_mbedtls_failure(t.tls) == RESPLOCK_MBEDTLS_FAILURE_verify &&
        (s == Status::io_error || s == Status::unknown_outcome)) {
        return exit_denied;
    }
#else
    (void)t;
#endif
    return exit_code(s);
}

// Why a TLS connection failed, when that is the reason for s. True if it wrote out.
bool describe_tls(Status s, const Target& t, char* out, std::size_t cap) {
#ifdef RESPLOCK_CLI_TLS
    if (t.tls == nullptr) return false;
    if (s != Status::io_error && s != Status::closed && s != Status::unknown_outcome) return false;
    char text[400];
    if (resplock_mbedtls_describe(t.tls, text, sizeof text) == 0) return false;
    // A server that requires a client certificate ends the handshake when it gets none.
    const bool hint =
        !t.client_cert && resplock_mbedtls_failure(t.tls) == RESPLOCK_MBEDTLS_FAILURE_handshake;
    (void)std::snprintf(
        out, cap, "%s (TLS with %s)%s", Masked(text).text, t.where,
        hint ? "; if the server requires a client certificate, give --cert and --key" : "");
    return true;
#else
    (void)s;
    (void)t;
    (void)out;
    (void)cap;
#endif
    return false;
}

bool is_error_reply(Status s) {
    switch (s) {
        case Status::server_error:
        case Status::auth_required:
        case Status::auth_failed:
        case Status::no_permission:
        case Status::no_script:
        case Status::read_only:
        case Status::loading:
        case Status::server_busy:
        case Status::out_of_memory:
        case Status::wrong_type:
            return true;
        default:
            return false;
    }
}

// The text of the error reply the connection received last, cut to server_text_max (and masked,
// should it echo a URL).
void server_text(const resplock::Connection& conn, char* out, std::size_t cap) {
    const std::string_view text = conn.error_text();
    const bool cut = text.size() > server_text_max;
    const Masked shown(text.substr(0, cut ? server_text_max : text.size()));
    (void)std::snprintf(out, cap, "%.*s%s", static_cast<int>(server_text_max), shown.text,
                        cut ? "..." : "");
}

// Why a call failed, in words, for "resplock: <what>: <why>".
void describe(Status s, const Target& t, char* out, std::size_t cap) {
    if (describe_tls(s, t, out, cap)) return;
    switch (s) {
        case Status::timeout:
            (void)std::snprintf(out, cap, "timed out after %u ms talking to %s", t.timeout_ms,
                                t.where);
            return;
        case Status::no_host:
            (void)std::snprintf(out, cap, "cannot resolve host name %s", t.host);
            return;
        case Status::connect_failed:
            (void)std::snprintf(out, cap, "cannot connect to %s: connection refused or unreachable",
                                t.where);
            return;
        case Status::closed:
            (void)std::snprintf(out, cap, "connection closed by the server at %s", t.where);
            return;
        case Status::io_error:
            (void)std::snprintf(out, cap, "transport error talking to %s", t.where);
            return;
        case Status::unknown_outcome:
            (void)std::snprintf(out, cap,
                                "request sent to %s but its reply was lost (timed out after %u ms "
                                "or connection lost): outcome unknown",
                                t.where, t.timeout_ms);
            return;
        case Status::incomplete:
        case Status::protocol_error:
            (void)std::snprintf(out, cap, "protocol error: malformed or unexpected reply from %s",
                                t.where);
            return;
        case Status::too_large:
            (void)std::snprintf(out, cap,
                                "protocol error: reply from %s exceeds the %zu-byte buffer or a "
                                "parser limit",
                                t.where, sizeof io_buffer);
            return;
        case Status::random_failed:
            (void)std::snprintf(out, cap,
                                "cannot make a lock token: the system's random source failed");
            return;
        case Status::invalid_argument:
            (void)std::snprintf(out, cap, "invalid argument (key, token or TTL refused)");
            return;
        default:
            break;
    }
    if (is_error_reply(s)) {
        char text[server_text_max + 8] = "";
        if (t.conn != nullptr) server_text(*t.conn, text, sizeof text);
        const Status shown = refused_in_script(s, t) ? Status::no_permission : s;
        (void)std::snprintf(out, cap, "%s from %s%s%s", resplock::to_string(shown), t.where,
                            text[0] != '\0' ? ": " : "", text);
        return;
    }
    (void)std::snprintf(out, cap, "%s", resplock::to_string(s));
}

// Reports a failed call as "resplock: <command> <key>: <why>" and returns its exit code.
int fail(Status s, const char* command, const char* key, const Target& t) {
    char why[512];
    describe(s, t, why, sizeof why);
    report("%s %s: %s", command, key, why);
    return exit_for(s, t);
}

// release/extend: not_owner and expired are answers, not faults.
int fail_owner(Status s, const Options& o, const Target& t) {
    const char* key = o.key_shown.text;
    if (s == Status::not_owner) {
        report("%s %s: token does not own the lock (another holder has it)", o.command_name, key);
        return exit_not_owner;
    }
    if (s == Status::expired) {
        report("%s %s: token does not own the lock (the key is gone: expired or released)",
               o.command_name, key);
        return exit_not_owner;
    }
    if (s == Status::unknown_outcome) {
        char why[512];
        describe(s, t, why, sizeof why);
        report("%s %s: %s; %s", o.command_name, key, why,
               o.command == Command::release ? "the lock may still be held until its TTL ends"
                                             : "its TTL may or may not have been reset");
        return exit_unavailable;
    }
    return fail(s, o.command_name, key, t);
}

// ---------------------------------------------------------------------------------------------
// Commands

// The lock kinds the tool drives: one server (resplock::Lock, with the acquisition options) or a
// quorum over several (resplock::QuorumLock). The commands below are written once for both.
resplock::AcquireOptions acquire_options(const Options& o) {
    resplock::AcquireOptions options;
    options.fence = o.fence;
    options.once_per_ms = o.once_per_ms;
    options.wake = o.wake;
    return options;
}

Status take(resplock::Lock& lock, const Options& o, std::uint64_t& fence) {
    if (!o.fence && o.once_per_ms == 0 && !o.wake) return lock.try_acquire(o.ttl_ms, o.wait_ms);
    return lock.try_acquire(o.ttl_ms, o.wait_ms, acquire_options(o), &fence);
}
Status take(resplock::QuorumLock& lock, const Options& o, std::uint64_t& /*fence*/) {
    return lock.try_acquire(o.ttl_ms, o.wait_ms);
}

Status give_back(resplock::Lock& lock, const Options& o) {
    return o.wake ? lock.release(acquire_options(o)) : lock.release();
}
Status give_back(resplock::QuorumLock& lock, const Options& /*o*/) {
    return lock.release();
}

// In a forked child: close our copies of the sockets (the parent keeps its own).
void close_in_child(const resplock::Lock& lock) {
    lock.connection().close();
}
void close_in_child(resplock::QuorumLock& lock) {
    lock.close();
}

// After a failed acquisition the lock keeps its token when the request may have set the key (its
// reply was lost or malformed, or the acquisition script failed after its SET, e.g. an ACL
// without +incr under --fence). The tool never hands that token to anyone, so it gives back what
// it may have taken (owner-checked: it never deletes another holder's key) rather than leave it
// for the whole TTL. Writes what became of it to out ("" when there was nothing to give back).
template <class L>
void undo_acquire(L& lock, const Options& o, char* out, std::size_t cap) {
    out[0] = '\0';
    if (lock.token().empty()) return;
    const Status r = give_back(lock, o);
    if (r == Status::ok) {
        (void)std::snprintf(out, cap, "the lock it had taken was released");
    } else if (r == Status::not_owner || r == Status::expired) {
        (void)std::snprintf(out, cap, "the key does not carry its token: nothing to release");
    } else {
        (void)std::snprintf(out, cap,
                            "the lock may have been taken and could not be released: it expires "
                            "by its TTL (%u ms)",
                            o.ttl_ms);
    }
}

// Acquisition failures of acquire and run, with what busy and unknown_outcome mean there.
template <class L>
int fail_acquire(L& lock, Status s, const Options& o, const Target& t) {
    const char* key = o.key_shown.text;
    // Read the server's error text before the release sends anything.
    const int code = s == Status::busy ? exit_busy : exit_for(s, t);
    char why[512];
    describe(s, t, why, sizeof why);
    char undone[160];
    undo_acquire(lock, o, undone, sizeof undone);
    const char* sep = undone[0] != '\0' ? "; " : "";
    if (s == Status::busy) {
        if (o.command == Command::run && o.once_per_ms != 0) {
            report(
                "run %s: not run: the lock is held, or was taken less than %u ms ago "
                "(--once-per)%s%s",
                key, o.once_per_ms, sep, undone);
        } else if (o.wait_ms == 0) {
            report("%s %s: lock is busy (held by someone else)%s%s", o.command_name, key, sep,
                   undone);
        } else {
            report("%s %s: lock is busy (held by someone else; gave up after waiting %u ms)%s%s",
                   o.command_name, key, o.wait_ms, sep, undone);
        }
        return code;
    }
    if (undone[0] == '\0' &&
        (s == Status::unknown_outcome || s == Status::protocol_error || s == Status::too_large)) {
        // The SET went out, no clean answer came back, and no token is left to release with.
        report("%s %s: %s; the lock may have been taken and will expire by its TTL (%u ms)",
               o.command_name, key, why, o.ttl_ms);
        return code;
    }
    report("%s %s: %s%s%s", o.command_name, key, why, sep, undone);
    return code;
}

template <class L>
int cmd_acquire(L& lock, const Options& o, const Target& t) {
    // A closed stdout must give an error we can act on (release), not a silent SIGPIPE death.
    (void)signal(SIGPIPE, SIG_IGN);
    std::uint64_t fence = 0;
    const Status s = take(lock, o, fence);
    if (s != Status::ok) return fail_acquire(lock, s, o, t);
    const std::string_view token = lock.token();
    if (o.fence) {
        std::printf("%.*s %llu\n", static_cast<int>(token.size()), token.data(),
                    static_cast<unsigned long long>(fence));
    } else {
        std::printf("%.*s\n", static_cast<int>(token.size()), token.data());
    }
    if (std::fflush(stdout) != 0 || std::ferror(stdout) != 0) {
        const int err = errno;
        const Status r = give_back(lock, o);
        report("acquire %s: cannot write the token to stdout: %s; %s", o.key_shown.text,
               std::strerror(err),
               r == Status::ok ? "lock released" : "the lock expires by its TTL");
        return exit_io;
    }
    return exit_ok;
}

template <class L>
int cmd_release(L& lock, const Options& o, const Target& t) {
    Status s = lock.adopt(o.operands[1]);
    if (s == Status::ok) s = give_back(lock, o);
    return s == Status::ok ? exit_ok : fail_owner(s, o, t);
}

template <class L>
int cmd_extend(L& lock, const Options& o, const Target& t) {
    Status s = lock.adopt(o.operands[1]);
    if (s == Status::ok) s = lock.extend(o.ttl_ms);
    return s == Status::ok ? exit_ok : fail_owner(s, o, t);
}

int print_status(const resplock::LockInfo& info) {
    if (info.state == resplock::LockState::free) {
        std::puts("free");
        (void)std::fflush(stdout);
        return exit_not_owner;
    }
    std::printf("held %lld\n", static_cast<long long>(info.ttl_ms));
    return std::fflush(stdout) == 0 ? exit_ok : exit_io;
}

int cmd_status(resplock::Lock& lock, const Options& o, const Target& t) {
    resplock::LockInfo info;
    Status s = lock.query(info);
    if (s == Status::wrong_type) {
        // Not a string: a reentrant lock's hash (or some other value) holds the key. The
        // reentrant lock's query reads any type and gives its PTTL.
        resplock::ReentrantLock reentrant(lock.connection(), lock.key());
        resplock::ReentrantInfo held;
        s = reentrant.query(held);
        info.state = held.state;
        info.ttl_ms = held.ttl_ms;
    }
    if (s != Status::ok) return fail(s, o.command_name, o.key_shown.text, t);
    return print_status(info);
}

// Over a quorum: held while a majority of the servers hold the key with one token; the time
// shown is the shortest PTTL among them.
int cmd_status(resplock::QuorumLock& lock, const Options& o, const Target& t) {
    resplock::LockInfo info;
    const Status s = lock.query(info);
    if (s != Status::ok) return fail(s, o.command_name, o.key_shown.text, t);
    return print_status(info);
}

// ---------------------------------------------------------------------------------------------
// run: COMMAND in a process group of its own, watched over by a guardian process
//
// COMMAND leads a new process group, and the lock stays held (and renewed) until every process of
// that group has ended, not only COMMAND: a script's subprocesses and background jobs stay in its
// group unless they leave it (setsid, setpgid, daemons). Signals sent to resplock are passed on
// to the group, and so is the stop when the lock is lost: SIGTERM, a grace period, SIGKILL, all
// before the lock's validity ends.
//
// A guardian process, outside the group, kills the group when resplock cannot. It reads a pipe
// that only resplock writes: after every renewal, when the lock's validity ends. It SIGKILLs the
// group at end of file (resplock died, even of SIGKILL), and when that end comes without a newer
// one (resplock stopped or stalled past the lock's validity).

constexpr std::uint32_t max_grace_ms = 2000;          // SIGTERM to SIGKILL, at most
constexpr std::uint32_t max_kill_allowance_ms = 100;  // for SIGKILL to take effect, at most
// How often the main loop looks at the lock and the group, should no signal wake it (a process of
// the group that is not resplock's child ends; an emulator that loses a thread-directed signal).
// It is the reaction time to a loss then, so it stays well below the kill allowance.
constexpr std::uint32_t group_poll_ms = 50;
constexpr std::uint32_t kill_wait_ms = 10000;     // for the group to vanish after SIGKILL
constexpr std::uint32_t guardian_exit_ms = 1000;  // for the guardian to exit once told
constexpr int guardian_killed = 3;                // the guardian's exit status: it killed the group

// The stop when the lock is lost: SIGTERM, then SIGKILL after min(2 s, ttl/4), then
// min(100 ms, ttl/10) for SIGKILL to take effect, all before the validity ends.
std::uint32_t grace_ms(std::uint32_t ttl_ms) {
    return std::min(max_grace_ms, ttl_ms / 4);
}
std::uint32_t kill_allowance_ms(std::uint32_t ttl_ms) {
    return std::min(max_kill_allowance_ms, ttl_ms / 10);
}

// Milliseconds on the clock the POSIX port measures validity on: CLOCK_BOOTTIME on Linux, which
// counts through a suspend.
std::uint64_t clock_ms() {
    timespec ts{};
#ifdef CLOCK_BOOTTIME
    (void)clock_gettime(CLOCK_BOOTTIME, &ts);
#else
    (void)clock_gettime(CLOCK_MONOTONIC, &ts);
#endif
    return static_cast<std::uint64_t>(ts.tv_sec) * 1000U +
           static_cast<std::uint64_t>(ts.tv_nsec) / 1000000U;
}

// Waits up to ms for one of `set` (blocked). Returns the signal, or 0 when the time ran out.
int wait_signal(const sigset_t& set, std::uint64_t ms, siginfo_t& info) {
    timespec ts{};
    ts.tv_sec = static_cast<time_t>(ms / 1000U);
    ts.tv_nsec = static_cast<long>((ms % 1000U) * 1000000U);
    const int sig = sigtimedwait(&set, &info, &ts);
    return sig > 0 ? sig : 0;  // EAGAIN (time up) or EINTR: the caller checks the clock
}

// Whether /proc shows a process of group pgid that is not a zombie. For when resplock cannot be
// the subreaper (an emulator may refuse it): then a zombie of the group waits for whoever reaps
// orphans, maybe nobody (PID 1 of a container), and must not count. True when it cannot tell.
bool group_has_live_process(pid_t pgid) {
#ifdef __linux__
    DIR* proc = opendir("/proc");
    if (proc == nullptr) return true;
    bool live = false;
    bool seen = false;
    while (!live) {
        // readdir_r is deprecated; this stream is used by this thread only.
        // cppcheck-suppress readdirCalled
        const dirent* entry = readdir(proc);
        if (entry == nullptr) break;
        const std::string_view name(entry->d_name);
        if (name.empty() || !std::all_of(name.begin(), name.end(), is_digit)) continue;
        char path[64];
        (void)std::snprintf(path, sizeof path, "/proc/%.20s/stat", entry->d_name);
        const int fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0) continue;
        char stat[512];
        const ssize_t n = read(fd, stat, sizeof stat - 1);
        (void)close(fd);
        if (n <= 0) continue;
        stat[n] = '\0';
        // "pid (comm) state ppid pgrp ...": comm may hold anything, so read after its last ')'.
        const char* end = std::strrchr(stat, ')');
        if (end == nullptr) continue;
        const std::string_view fields(end + 1);  // " S 123 456 ..."
        const std::size_t ppid_at = fields.find(' ', 1);
        const std::size_t pgrp_at = ppid_at == std::string_view::npos
                                        ? std::string_view::npos
                                        : fields.find(' ', ppid_at + 1);
        if (fields.size() < 3 || pgrp_at == std::string_view::npos) continue;
        const std::string_view pgrp =
            fields.substr(pgrp_at + 1, fields.find(' ', pgrp_at + 1) - pgrp_at - 1);
        std::uint32_t group = 0;
        if (!parse_number(pgrp, 1, max_ms, group) || group != static_cast<std::uint32_t>(pgid)) {
            continue;
        }
        seen = true;
        live = fields[1] != 'Z' && fields[1] != 'X';
    }
    (void)closedir(proc);
    // None seen though kill() found some: hidden from us (hidepid), so assume they live.
    return live || !seen;
#else
    (void)pgid;
    return true;
#endif
}

// Whether any process of the group is left. A zombie counts until it is reaped, which resplock
// does itself as the subreaper; without that, a group of zombies only is gone.
bool group_alive(pid_t pgid, bool subreaper) {
    if (kill(-pgid, 0) != 0 && errno != EPERM) return false;
    return subreaper || group_has_live_process(pgid);
}

int child_exit_code(int status) {
    if (WIFEXITED(status)) return WEXITSTATUS(status);
    if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
    return exit_protocol;  // not reached: stopped children are not reported without WUNTRACED
}

// What resplock tells the guardian, in one write() of this size (atomic on a pipe, so the main
// thread and the renewal thread may both write): the clock_ms() at which to kill the group unless
// told a later one, or quit.
constexpr std::size_t guardian_message_size = 9;
constexpr unsigned char guardian_deadline = 'D';
constexpr unsigned char guardian_quit = 'Q';

void encode(unsigned char kind, std::uint64_t value, unsigned char (&out)[guardian_message_size]) {
    out[0] = kind;
    for (std::size_t i = 0; i < 8; ++i)
        out[1 + i] = static_cast<unsigned char>(value >> (8 * i));
}

std::uint64_t decode(const unsigned char (&in)[guardian_message_size]) {
    std::uint64_t value = 0;
    for (std::size_t i = 0; i < 8; ++i)
        value |= static_cast<std::uint64_t>(in[1 + i]) << (8 * i);
    return value;
}

// The guardian process: waits for messages on `in` until told to quit, or kills COMMAND's group.
[[noreturn]] void guardian_main(int in, pid_t pgid, std::uint64_t deadline_ms) {
    struct sigaction ignore {};
    ignore.sa_handler = SIG_IGN;
    sigemptyset(&ignore.sa_mask);
    for (const int sig : {SIGINT, SIGTERM, SIGHUP, SIGPIPE, SIGTSTP, SIGTTIN, SIGTTOU}) {
        (void)sigaction(sig, &ignore, nullptr);
    }
    sigset_t none;
    sigemptyset(&none);
    (void)sigprocmask(SIG_SETMASK, &none, nullptr);
    int timer = -1;
#ifdef __linux__
    // A timer on the same clock, so that it fires on time after a suspend too.
    timer = timerfd_create(CLOCK_BOOTTIME, TFD_CLOEXEC);
#endif
    unsigned char message[guardian_message_size];
    std::size_t have = 0;
    for (;;) {
        const std::uint64_t now = clock_ms();
        if (now >= deadline_ms) _exit(kill(-pgid, SIGKILL) == 0 ? guardian_killed : 0);
        // Without a timer, poll wakes up often enough to notice a suspend soon after it.
        int wait_ms = static_cast<int>(std::min<std::uint64_t>(deadline_ms - now, 100));
#ifdef __linux__
        itimerspec at{};
        at.it_value.tv_sec = static_cast<time_t>(deadline_ms / 1000U);
        at.it_value.tv_nsec = static_cast<long>((deadline_ms % 1000U) * 1000000U);
        if (timer >= 0 && timerfd_settime(timer, TFD_TIMER_ABSTIME, &at, nullptr) == 0) {
            wait_ms = -1;
        }
#endif
        pollfd fds[2] = {{in, POLLIN, 0}, {timer, POLLIN, 0}};
        if (poll(fds, timer >= 0 ? 2 : 1, wait_ms) <= 0) continue;           // time up or EINTR
        if ((fds[0].revents & (POLLIN | POLLHUP | POLLERR)) == 0) continue;  // the timer
        const ssize_t n = read(in, message + have, sizeof message - have);
        if (n < 0 && (errno == EINTR || errno == EAGAIN)) continue;
        if (n <= 0) {
            // resplock is gone without a word: nobody is left to keep the lock.
            (void)kill(-pgid, SIGKILL);
            _exit(guardian_killed);
        }
        have += static_cast<std::size_t>(n);
        if (have < sizeof message) continue;
        have = 0;
        if (message[0] == guardian_quit) _exit(0);
        if (message[0] == guardian_deadline) deadline_ms = decode(message);
    }
}

// resplock's side of the guardian.
class Guardian {
  public:
    // `early_ms`: how long before the end of the lock's validity the guardian kills the group.
    explicit Guardian(std::uint32_t early_ms) : early_ms_(early_ms) {}
    Guardian(const Guardian&) = delete;
    Guardian& operator=(const Guardian&) = delete;
    ~Guardian() { (void)finish(); }

    // Forks the guardian of group `pgid`, the lock being valid for left_ms more. In the guardian,
    // closes the lock's sockets and `also_close`. Returns false (errno set) if it cannot.
    template <class L>
    bool start(L& lock, pid_t pgid, std::uint32_t left_ms, int also_close) {
        int fds[2];
        if (pipe2(fds, O_CLOEXEC) != 0) return false;
        const std::uint64_t deadline = deadline_for(left_ms);
        (void)std::fflush(stdout);
        (void)std::fflush(stderr);
        pid_ = fork();
        if (pid_ == 0) {
            // A process group of its own too: a SIGKILL to resplock's group (a shell's kill -9 %1)
            // leaves the guardian to do its job.
            (void)setpgid(0, 0);
            close_in_child(lock);
            (void)close(also_close);
            (void)close(fds[1]);
            // The guardian writes nothing, and must not keep a caller's pipe (stdout of $(...))
            // open: its standard streams go to /dev/null, its pipe above them.
            const int in = fcntl(fds[0], F_DUPFD_CLOEXEC, 3);
            const int null_fd = open("/dev/null", O_RDWR | O_CLOEXEC);
            for (int fd = 0; fd <= 2; ++fd) {
                if (null_fd < 0 || dup2(null_fd, fd) < 0) (void)close(fd);
            }
            guardian_main(in >= 0 ? in : fds[0], pgid, deadline);
        }
        const int err = errno;
        (void)close(fds[0]);
        if (pid_ < 0) {
            (void)close(fds[1]);
            errno = err;
            return false;
        }
        fd_ = fds[1];
        return true;
    }

    pid_t pid() const { return pid_; }

    // A renewal left the lock valid for left_ms more. Safe from any thread while started.
    void renewed(std::uint32_t left_ms) const { send(guardian_deadline, deadline_for(left_ms)); }

    // The guardian was reaped with this wait status.
    void reaped(int status) {
        reaped_ = true;
        status_ = status;
    }

    // Tells the guardian to exit, waits for it (killing it if it does not exit in time) and
    // reaps it. Returns whether it had killed the group.
    bool finish() {
        if (fd_ >= 0) {
            send(guardian_quit, 0);
            (void)close(fd_);
            fd_ = -1;
        }
        if (pid_ > 0 && !reaped_) {
            const std::uint64_t until = clock_ms() + guardian_exit_ms;
            int status = 0;
            for (;;) {
                const pid_t r = waitpid(pid_, &status, WNOHANG);
                if (r == pid_) break;
                if (r < 0 && errno != EINTR) break;
                if (clock_ms() >= until) {
                    (void)kill(pid_, SIGKILL);
                    while (waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
                    }
                    break;
                }
                const timespec pause{0, 1000000};
                (void)nanosleep(&pause, nullptr);
            }
            reaped(status);
        }
        return killed();
    }
    // Whether the guardian was reaped after killing the group.
    bool killed() const {
        return reaped_ && WIFEXITED(status_) && WEXITSTATUS(status_) == guardian_killed;
    }

  private:
    std::uint64_t deadline_for(std::uint32_t left_ms) const {
        const std::uint64_t now = clock_ms();
        return left_ms > early_ms_ ? now + left_ms - early_ms_ : now;
    }
    void send(unsigned char kind, std::uint64_t value) const {
        if (fd_ < 0) return;
        unsigned char message[guardian_message_size];
        encode(kind, value, message);
        // A guardian that is gone (EPIPE; SIGPIPE is ignored) has nothing left to do.
        while (write(fd_, message, sizeof message) < 0 && errno == EINTR) {
        }
    }

    std::uint32_t early_ms_;
    pid_t pid_ = -1;
    int fd_ = -1;  // the pipe's write end: only resplock holds it (O_CLOEXEC)
    bool reaped_ = false;
    int status_ = 0;
};

// The lock as the renewal driver sees it: after each successful renewal, the guardian learns the
// new end of the validity (from the renewal thread).
template <class L>
class Renewed {
  public:
    Renewed(L& lock, const Guardian& guardian) : lock_(lock), guardian_(guardian) {}
    Status extend(std::uint32_t ttl_ms, std::uint32_t wait_ms) {
        const Status s = lock_.extend(ttl_ms, wait_ms);
        if (s == Status::ok) guardian_.renewed(lock_.remaining_ms());
        return s;
    }
    std::uint32_t remaining_ms() const { return lock_.remaining_ms(); }
    std::string_view token() const { return lock_.token(); }

  private:
    L& lock_;
    const Guardian& guardian_;
};

// COMMAND's process group: its leader (COMMAND itself, whose pid is the group's id) and how it
// ended.
struct Group {
    pid_t leader = -1;
    bool leader_done = false;
    int leader_status = 0;
    bool subreaper = false;  // resplock reaps the group's orphans (Linux)
    bool alive() const { return group_alive(leader, subreaper); }
};

// Reaps every child that has ended: COMMAND, the guardian, and (as a subreaper, on Linux) the
// processes of the group whose parent ended before them.
void reap_all(Group& g, Guardian& guardian) {
    for (;;) {
        int status = 0;
        const pid_t p = waitpid(-1, &status, WNOHANG);
        if (p > 0) {
            if (p == g.leader) {
                g.leader_done = true;
                g.leader_status = status;
            } else if (p == guardian.pid()) {
                guardian.reaped(status);
            }
            continue;
        }
        if (p < 0 && errno == EINTR) continue;
        if (p < 0 && !g.leader_done) {
            g.leader_done = true;  // ECHILD: someone else reaped it; nothing left to wait for
            g.leader_status = 0;
        }
        return;
    }
}

// Waits up to ms for the whole group to end, reaping as it goes. True if it has.
bool wait_group_end(Group& g, Guardian& guardian, std::uint32_t ms, const sigset_t& watched) {
    const std::uint64_t until = clock_ms() + ms;
    for (;;) {
        reap_all(g, guardian);
        if (!g.alive()) return true;
        const std::uint64_t now = clock_ms();
        if (now >= until) return false;
        siginfo_t info{};
        (void)wait_signal(watched, std::min<std::uint64_t>(until - now, 10), info);
    }
}

// The lock is lost: SIGTERM the group, SIGKILL it after grace_ms, reap it. False if some of it
// survived SIGKILL for kill_wait_ms (a process stuck in the kernel).
bool stop_group(Group& g, Guardian& guardian, std::uint32_t grace, const sigset_t& watched) {
    reap_all(g, guardian);
    if (!g.alive()) return true;
    if (grace > 0) {
        (void)kill(-g.leader, SIGTERM);
        (void)kill(-g.leader, SIGCONT);  // a stopped process acts on SIGTERM once continued
        if (wait_group_end(g, guardian, grace, watched)) return true;
    }
    (void)kill(-g.leader, SIGKILL);
    return wait_group_end(g, guardian, kill_wait_ms, watched);
}

// What the forked child needs to become COMMAND.
struct ChildSetup {
    pid_t parent;
    int go_read;  // the handshake pipe: resplock writes one byte when COMMAND may start
    int go_write;
    bool drop_redis_url;
    sigset_t old_mask;
    struct sigaction old_chld;
    struct sigaction old_pipe;
    struct sigaction old_ttou;
};

// In the forked child: join a new process group, wait for resplock's go, export the lock,
// restore the caller's signal state and exec COMMAND.
template <class L>
[[noreturn]] void exec_child(L& lock, const Options& o, std::uint64_t fence, const ChildSetup& c) {
    // First of all, so that whatever resplock sends to the group reaches this process.
    (void)setpgid(0, 0);
#ifdef __linux__
    // Dies with resplock, even of SIGKILL; the guardian sees to the rest of the group.
    (void)prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != c.parent) _exit(exit_cannot_run);  // resplock died before that
#endif
    close_in_child(lock);
    (void)close(c.go_write);
    // Held until resplock has set everything up: one byte means go, end of file that it gave up
    // (and said why).
    char go = 0;
    ssize_t n = 0;
    while ((n = read(c.go_read, &go, 1)) < 0 && errno == EINTR) {
    }
    if (n != 1) _exit(exit_cannot_run);
    (void)close(c.go_read);

    char token[resplock::max_token_len + 1];
    const std::string_view t = lock.token();
    std::memcpy(token, t.data(), t.size());
    token[t.size()] = '\0';
    char fence_text[24];
    (void)std::snprintf(fence_text, sizeof fence_text, "%llu",
                        static_cast<unsigned long long>(fence));
    if (setenv("RESPLOCK_TOKEN", token, 1) != 0 || setenv("RESPLOCK_KEY", o.operands[0], 1) != 0 ||
        (o.fence && setenv("RESPLOCK_FENCE", fence_text, 1) != 0) ||
        (c.drop_redis_url && unsetenv("REDIS_URL") != 0)) {
        report("cannot run %.100s: %s", Masked(o.run_argv[0]).text, std::strerror(errno));
        _exit(exit_cannot_run);
    }
    (void)sigaction(SIGCHLD, &c.old_chld, nullptr);
    (void)sigaction(SIGPIPE, &c.old_pipe, nullptr);
    (void)sigaction(SIGTTOU, &c.old_ttou, nullptr);
    (void)sigprocmask(SIG_SETMASK, &c.old_mask, nullptr);
    execvp(o.run_argv[0], o.run_argv);
    const int err = errno;
    report("cannot run %.100s: %s", Masked(o.run_argv[0]).text, std::strerror(err));
    _exit(err == ENOENT || err == ENOTDIR ? exit_not_found : exit_cannot_run);
}

// Whether REDIS_URL may carry a password: one of its URLs has user-info (user:password@, or
// user@, which some clients read as a password), or does not parse. COMMAND then does not get it.
bool redis_url_has_password() {
    const char* env = std::getenv("REDIS_URL");
    if (env == nullptr) return false;
    std::string_view rest(env);
    while (!rest.empty()) {
        const std::size_t cut = url_list_cut(rest);
        const std::string_view url = rest.substr(0, cut);
        char text[2048];
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

// What the renewal thread tells the main thread when the lock is lost.
struct LostNote {
    std::atomic<int> why{-1};  // the Status, once lost
    pthread_t main_thread{};
};

template <class L>
int cmd_run(L& lock, const Options& o, const Target& t, const resplock_port_t& port) {
    const char* key = o.key_shown.text;
    std::uint64_t fence = 0;
    Status s = take(lock, o, fence);
    if (s != Status::ok) return fail_acquire(lock, s, o, t);

    // Signals are taken synchronously with sigtimedwait, so they are blocked from before fork
    // (none can be lost in between) and in the renewal thread. SIGCHLD must not be ignored, or
    // children would be reaped behind our back; SIGPIPE is ignored for the guardian's pipe, and
    // SIGTTOU so that resplock may take the terminal back from the background. COMMAND gets the
    // caller's dispositions and mask back before exec.
    ChildSetup setup{};
    setup.parent = getpid();
    setup.drop_redis_url = redis_url_has_password();
    struct sigaction dfl {};
    dfl.sa_handler = SIG_DFL;
    sigemptyset(&dfl.sa_mask);
    struct sigaction ignore = dfl;
    ignore.sa_handler = SIG_IGN;
    (void)sigaction(SIGCHLD, &dfl, &setup.old_chld);
    (void)sigaction(SIGPIPE, &ignore, &setup.old_pipe);
    (void)sigaction(SIGTTOU, &ignore, &setup.old_ttou);
    sigset_t watched;
    sigemptyset(&watched);
    sigaddset(&watched, SIGCHLD);
    sigaddset(&watched, SIGINT);
    sigaddset(&watched, SIGTERM);
    sigaddset(&watched, SIGHUP);
    (void)sigprocmask(SIG_BLOCK, &watched, &setup.old_mask);

    if (!lock.held()) {
        // A TTL so short that nothing of it is left to rely on: do not start COMMAND.
        (void)give_back(lock, o);
        report(
            "run %s: lock lost (its %u ms TTL ran out before COMMAND could start); not "
            "running COMMAND",
            key, o.ttl_ms);
        return exit_lost;
    }

#ifdef __linux__
    // Processes of the group whose parent ends are re-parented to resplock, which reaps them: a
    // zombie nobody reaps (PID 1 of a container may never do it) would keep the group alive.
    const bool subreaper = prctl(PR_SET_CHILD_SUBREAPER, 1) == 0;
#else
    const bool subreaper = false;
#endif
    const std::uint32_t grace = grace_ms(o.ttl_ms);
    const std::uint32_t allowance = kill_allowance_ms(o.ttl_ms);
    Group group;
    group.subreaper = subreaper;
    // Its SIGKILL lands between resplock's own and the end of the validity.
    Guardian guardian(allowance / 2);
    // The renewal driver reports a loss, early enough to stop COMMAND before the validity ends,
    // by a SIGCHLD to this thread, which then looks at `note`.
    LostNote note;
    note.main_thread = pthread_self();
    Renewed<L> renewed(lock, guardian);
    resplock::Renewer renewer;
    resplock::RenewerThread renewals(renewer, port);

    // Every failure of the set-up below: COMMAND (held before exec) is not started.
    const char* failed = nullptr;
    int failure = 0;
    int go[2] = {-1, -1};
    if (pipe2(go, O_CLOEXEC) != 0) {
        failed = "pipe";
        failure = errno;
    } else {
        setup.go_read = go[0];
        setup.go_write = go[1];
        (void)std::fflush(stdout);
        (void)std::fflush(stderr);
        group.leader = fork();
        if (group.leader == 0) exec_child(lock, o, fence, setup);
        failure = errno;
        (void)close(go[0]);
        if (group.leader < 0) failed = "fork";
    }
    if (failed == nullptr) {
        // Set on both sides of the fork, so that it holds whichever runs first.
        (void)setpgid(group.leader, group.leader);
        if (getpgid(group.leader) != group.leader) {
            failed = "setpgid";
            failure = errno;
        } else if (!guardian.start(lock, group.leader, lock.remaining_ms(), go[1])) {
            failed = "cannot start its guardian process";
            failure = errno;
        }
    }
    if (failed == nullptr) {
        s = renewer.watch(
            renewed, o.ttl_ms,
            [](void* user, void* /*lock*/, Status why) {
                auto& n = *static_cast<LostNote*>(user);
                n.why.store(static_cast<int>(why));
                (void)pthread_kill(n.main_thread, SIGCHLD);
            },
            &note, grace + allowance);
        if (s == Status::ok) s = renewals.start();
        if (s != Status::ok) {
            failed = "cannot renew the lock";
            failure = 0;
        }
    }
    if (failed != nullptr) {
        if (go[1] >= 0) (void)close(go[1]);  // the held child reads end of file and exits
        if (group.leader > 0) {
            while (waitpid(group.leader, nullptr, 0) < 0 && errno == EINTR) {
            }
        }
        renewals.stop();
        (void)guardian.finish();
        const Status r = give_back(lock, o);
        report("cannot run %.100s: %s%s%s; %s", Masked(o.run_argv[0]).text, failed,
               failure != 0 ? ": " : "", failure != 0 ? std::strerror(failure) : "",
               r == Status::ok ? "lock released" : "the lock expires by its TTL");
        return exit_cannot_run;
    }

    // An interactive COMMAND reads the terminal: its group gets the terminal's foreground (from
    // resplock's group, which had it), and gives it back once gone.
    const bool terminal = isatty(STDIN_FILENO) == 1 && tcgetpgrp(STDIN_FILENO) == getpgrp() &&
                          tcsetpgrp(STDIN_FILENO, group.leader) == 0;
    const char start = 'g';
    while (write(go[1], &start, 1) < 0 && errno == EINTR) {
    }
    (void)close(go[1]);

    // Until the lock is lost, or COMMAND and every process left in its group have ended.
    for (;;) {
        reap_all(group, guardian);
        if (note.why.load() >= 0) break;
        if (group.leader_done && !group.alive()) break;
        siginfo_t info{};
        const int sig = wait_signal(watched, group_poll_ms, info);
        if (sig == SIGINT || sig == SIGTERM || sig == SIGHUP) (void)kill(-group.leader, sig);
    }

    const int lost = note.why.load();
    bool gone = true;
    reap_all(group, guardian);
    const bool stalled = guardian.killed();
    if (lost >= 0 && stalled) {
        // The guardian was first: resplock was stopped past the validity, which then ran out.
        gone = stop_group(group, guardian, 0, watched);
    } else if (lost >= 0) {
        const auto why = static_cast<Status>(lost);
        std::uint32_t left = 0;
        {
            const std::lock_guard<resplock::RenewerThread> hold(renewals);
            left = lock.remaining_ms();
        }
        // The lock object forgets its token when the server said the key is not ours.
        const char* what = why == Status::not_owner ? "another holder has the key"
                           : lock.token().empty()   ? "the key is gone: expired or deleted"
                           : why == Status::expired
                               ? "no renewal succeeded before its TTL ran out (less the time "
                                 "needed to stop COMMAND)"
                               : resplock::to_string(why);
        report("run %s: lock lost (%s); stopping COMMAND", key, what);
        // Never past the validity left: SIGKILL at once when nothing is left.
        gone = stop_group(group, guardian, left > allowance ? std::min(grace, left - allowance) : 0,
                          watched);
    }
    renewals.stop();
    if (terminal) (void)tcsetpgrp(STDIN_FILENO, getpgrp());  // SIGTTOU is ignored
    const bool killed = guardian.finish();
    if (killed && (lost < 0 || stalled)) {
        report(
            "run %s: lock lost (resplock was stopped or stalled until the lock's validity "
            "ran out); COMMAND's process group was killed",
            key);
    }
    if (lost >= 0 || killed) {
        if (!gone) {
            report(
                "run %s: warning: processes of COMMAND's group survived SIGKILL; not releasing: "
                "the lock expires by its TTL",
                key);
        } else if (!lock.token().empty()) {
            // The key may still carry our token if only the server was out of reach.
            (void)give_back(lock, o);
        }
        return exit_lost;
    }

    const int code = child_exit_code(group.leader_status);
    s = give_back(lock, o);
    if (s == Status::not_owner || s == Status::expired) {
        report("run %s: warning: the lock was no longer held when COMMAND ended (%s)", key,
               s == Status::not_owner ? "another holder has it" : "the key was gone");
    } else if (s != Status::ok) {
        char why[512];
        describe(s, t, why, sizeof why);
        report("run %s: warning: release failed (%s); the lock expires by its TTL", key, why);
    }
    return code;
}

#ifdef RESPLOCK_CLI_TLS
// Certificates and keys as read from their files; PEM gets its NUL counted, as mbedTLS wants.
struct Blob {
    unsigned char* data;
    std::size_t cap;
    std::size_t len;
};
// Static storage: too large for the stack, and the tool allocates nothing.
// NOLINTBEGIN(cppcoreguidelines-avoid-non-const-global-variables)
unsigned char ca_file[256 * 1024 + 1];  // a whole system CA bundle fits
unsigned char cert_file[64 * 1024 + 1];
unsigned char key_file[64 * 1024 + 1];
// NOLINTEND(cppcoreguidelines-avoid-non-const-global-variables)

bool read_blob(const char* option, const char* path, Blob& blob) {
    std::FILE* f = std::fopen(path, "rb");
    if (f == nullptr) {
        report("cannot read --%s %s: %s", option, Masked(path).text, std::strerror(errno));
        return false;
    }
    const std::size_t n = std::fread(blob.data, 1, blob.cap - 1, f);
    const bool failed = std::ferror(f) != 0;
    const bool too_big = !failed && n == blob.cap - 1 && std::fgetc(f) != EOF;
    (void)std::fclose(f);
    if (failed || too_big || n == 0) {
        report("cannot read --%s %s: %s", option, Masked(path).text,
               failed    ? "read error"
               : too_big ? "larger than the limit"
                         : "empty file");
        return false;
    }
    blob.data[n] = '\0';
    const std::string_view text(reinterpret_cast<const char*>(blob.data), n);
    blob.len = text.find("-----BEGIN") != std::string_view::npos ? n + 1 : n;
    return true;
}

// Reads the TLS files and wraps `inner` in tls. Returns -1 on success, else the exit code.
int setup_tls(const Options& o, const resplock_port_t& inner, resplock_mbedtls_t& tls,
              resplock_port_t& out) {
    if (o.cacert == nullptr && !o.insecure) {
        report(
            "rediss:// needs --cacert FILE (the CA that signed the server's certificate), or "
            "--%s to skip verification",
            insecure_flag);
        return exit_usage;
    }
    if ((o.cert == nullptr) != (o.key == nullptr)) {
        report("--cert and --key go together (a client certificate and its private key)");
        return exit_usage;
    }
    if (o.insecure) {
        report(
            "warning: --%s: the server's certificate is NOT verified; anyone on the "
            "network path can impersonate the server and read the traffic",
            insecure_flag);
    }
    resplock_mbedtls_config_t config{};
    Blob ca{ca_file, sizeof ca_file, 0};
    Blob cert{cert_file, sizeof cert_file, 0};
    Blob key{key_file, sizeof key_file, 0};
    if (o.cacert != nullptr) {
        if (!read_blob("cacert", o.cacert, ca)) return exit_usage;
        config.ca = ca.data;
        config.ca_len = ca.len;
    }
    if (o.cert != nullptr) {
        if (!read_blob("cert", o.cert, cert) || !read_blob("key", o.key, key)) return exit_usage;
        config.cert = cert.data;
        config.cert_len = cert.len;
        config.key = key.data;
        config.key_len = key.len;
    }
    config.server_name = o.tls_server_name;
    config.insecure_skip_verify = o.insecure ? 1 : 0;
    config.inner = &inner;
    const resplock_status_t s = resplock_mbedtls_port_init(&tls, &config, &out);
    if (s == RESPLOCK_STATUS_ok) return -1;
    char why[400];
    if (resplock_mbedtls_describe(&tls, why, sizeof why) == 0) {
        (void)std::snprintf(why, sizeof why, "%s", resplock_status_str(s));
    }
    const resplock_mbedtls_failure_t kind = resplock_mbedtls_failure(&tls);
    const char* file = kind == RESPLOCK_MBEDTLS_FAILURE_ca     ? o.cacert
                       : kind == RESPLOCK_MBEDTLS_FAILURE_cert ? o.cert
                       : kind == RESPLOCK_MBEDTLS_FAILURE_key  ? o.key
                                                               : nullptr;
    if (file != nullptr) {
        report("%s: %s", Masked(file).text, Masked(why).text);
    } else if (s == RESPLOCK_STATUS_invalid_argument) {
        report("TLS setup refused: %s (is --tls-server-name longer than %d characters?)",
               Masked(why).text, RESPLOCK_MBEDTLS_MAX_NAME);
    } else {
        report("%s", Masked(why).text);
    }
    return s == RESPLOCK_STATUS_invalid_argument ? exit_usage : exit_unavailable;
}
#endif

// Parses one URL (a view into argv or the environment) into ep, with the checks every server
// gets. Returns -1 on success, else the exit code.
int endpoint_from(std::string_view url, const char* source, const Options& o, Endpoint& ep) {
    char text[2048];
    if (url.size() >= sizeof text) {
        report("invalid URL in %s: longer than %zu characters", source, sizeof text - 1);
        return exit_usage;
    }
    std::memcpy(text, url.data(), url.size());
    text[url.size()] = '\0';
    const char* why = "";
    if (parse_url(text, ep, &why) != UrlResult::ok) {
        report("invalid URL in %s '%s': %s", source, Masked(text).text, why);
        return exit_usage;
    }
    if (o.password_file != nullptr && !read_password_file(o.password_file, ep)) {
        return exit_usage;
    }
    if (ep.has_username && !ep.has_password) {
        // Refused rather than sent as the default user; redis-cli even reads this form as a
        // password, so the name is not shown.
        report(
            "the URL in %s names a user but no password (redis://user:password@host, or "
            "--password-file)",
            source);
        return exit_usage;
    }
    const bool tls_options = o.cacert != nullptr || o.cert != nullptr || o.key != nullptr ||
                             o.tls_server_name != nullptr || o.insecure;
    if (tls_options && !ep.tls) {
        // Refused rather than ignored: the user expects TLS and would get plain text.
        report(
            "--cacert, --cert, --key, --tls-server-name and --%s need a rediss:// URL (%s is "
            "redis://)",
            insecure_flag, source);
        return exit_usage;
    }
#ifndef RESPLOCK_CLI_TLS
    if (ep.tls) {
        report("rediss:// (TLS) is not supported by this build");
        return exit_usage;
    }
#endif
    return -1;
}

resplock::ConnectionConfig connection_config(const Endpoint& ep, const Options& o) {
    resplock::ConnectionConfig config;
    config.host = ep.host;
    config.port = ep.port;
    config.username = ep.has_username ? ep.username : nullptr;
    config.password = ep.has_password ? ep.password : nullptr;
    config.db = ep.db;
    config.timeout_ms = o.timeout_ms;
    return config;
}

template <class L>
int dispatch(L& lock, const Options& o, const Target& t, const resplock_port_t& port) {
    switch (o.command) {
        case Command::acquire:
            return cmd_acquire(lock, o, t);
        case Command::release:
            return cmd_release(lock, o, t);
        case Command::extend:
            return cmd_extend(lock, o, t);
        case Command::status:
            return cmd_status(lock, o, t);
        case Command::run:
            return cmd_run(lock, o, t, port);
        case Command::none:
            break;
    }
    return exit_usage;
}

// A quorum lock over the servers of eps[0..count).
int run_quorum(const Options& o, Endpoint* eps, int count, const resplock_port_t& port) {
    if (o.fence || o.once_per_ms != 0 || o.wake) {
        report(
            "--fence, --once-per and --wake work with one server only, not with a quorum of "
            "%d (several --url)",
            count);
        return exit_usage;
    }
    for (int i = 0; i < count; ++i) {
        if (eps[i].tls) {
            report("rediss:// (TLS) is not supported in a quorum lock (several --url)");
            return exit_usage;
        }
    }
    // NOLINTNEXTLINE(cppcoreguidelines-avoid-non-const-global-variables): no heap
    static char buffers[RESPLOCK_MAX_SERVERS][sizeof io_buffer];
    // One transport context per server: a port context holds one connection.
    // NOLINTNEXTLINE(cppcoreguidelines-avoid-non-const-global-variables): no heap
    static resplock_posix_t contexts[RESPLOCK_MAX_SERVERS];
    resplock_port_t ports[RESPLOCK_MAX_SERVERS];
    std::optional<resplock::Connection> conns[RESPLOCK_MAX_SERVERS];
    resplock::Connection* list[RESPLOCK_MAX_SERVERS] = {};
    Target target{};
    int used = std::snprintf(target.where, sizeof target.where, "a quorum of %d servers (", count);
    for (int i = 0; i < count; ++i) {
        const auto n = static_cast<std::size_t>(used);
        if (n < sizeof target.where) {
            used += std::snprintf(target.where + n, sizeof target.where - n,
                                  eps[i].ipv6 ? "%s[%s]:%u" : "%s%s:%u", i == 0 ? "" : ", ",
                                  eps[i].host, static_cast<unsigned>(eps[i].port));
        }
        (void)resplock_posix_port_init(&contexts[i], nullptr, &ports[i]);  // fails on null only
        conns[i].emplace(ports[i], connection_config(eps[i], o), buffers[i], sizeof buffers[i]);
        list[i] = &*conns[i];
    }
    const auto n = static_cast<std::size_t>(used);
    if (n < sizeof target.where)
        (void)std::snprintf(target.where + n, sizeof target.where - n, ")");
    target.host = eps[0].host;
    target.timeout_ms = o.timeout_ms;
    target.conn = nullptr;  // several servers: no single error text
    resplock::QuorumLock lock(list, static_cast<std::size_t>(count), o.operands[0]);
    return dispatch(lock, o, target, port);
}

int run(int argc, char** argv) {
    Options o;
    const int parsed = parse_args(argc, argv, o);
    if (parsed >= 0) return parsed;

    const char* source = "--url";
    if (o.url_count == 0) {
        const char* env = std::getenv("REDIS_URL");
        if (env != nullptr && *env != '\0') {
            source = "REDIS_URL";
            if (!add_urls(o, env)) return exit_usage;
        } else {
            o.urls[o.url_count++] = default_url;
        }
    }
    if (o.once_per_ms != 0 && o.command != Command::run && o.command != Command::acquire) {
        report("--once-per applies to run and acquire only");
        return exit_usage;
    }
    if (o.fence && o.command != Command::run && o.command != Command::acquire) {
        report("--fence applies to run and acquire only");
        return exit_usage;
    }
    if (resplock::lock_options_buffer_min() > sizeof io_buffer) {
        report("internal error: the %zu-byte buffer is below the library's minimum of %zu",
               sizeof io_buffer, resplock::lock_options_buffer_min());
        return exit_protocol;
    }
    static Endpoint eps[RESPLOCK_MAX_SERVERS];
    for (int i = 0; i < o.url_count; ++i) {
        const int r = endpoint_from(o.urls[i], source, o, eps[i]);
        if (r >= 0) return r;
    }

    static resplock_posix_t posix;
    resplock_port_t port;
    (void)resplock_posix_port_init(&posix, nullptr, &port);  // fails on null arguments only
    if (o.url_count > 1) return run_quorum(o, eps, o.url_count, port);

    const Endpoint& ep = eps[0];
    Target target{};
    (void)std::snprintf(target.where, sizeof target.where, ep.ipv6 ? "[%s]:%u" : "%s:%u", ep.host,
                        static_cast<unsigned>(ep.port));
    target.host = ep.host;
    target.timeout_ms = o.timeout_ms;
#ifdef RESPLOCK_CLI_TLS
    static resplock_mbedtls_t tls;
    target.tls = nullptr;
    target.client_cert = o.cert != nullptr;
    if (ep.tls) {
        const int r = setup_tls(o, port, tls, port);
        if (r >= 0) return r;
        target.tls = &tls;
    }
#endif
    resplock::Connection conn(port, connection_config(ep, o), io_buffer, sizeof io_buffer);
    target.conn = &conn;
    resplock::Lock lock(conn, o.operands[0]);
    return dispatch(lock, o, target, port);
}

}  // namespace

int main(int argc, char** argv) {
    return run(argc, argv);
}
