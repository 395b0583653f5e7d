// Every class of invalid (and surprising but valid) input, one test per row of the README's
// input table: the library's status and the tool's exit code with its one "resplock: " line.
// Library rows that need no server use a connection to a port where nothing listens, so any call
// that got past its argument checks would report connect_failed instead.
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>
#include <vector>

#include "check.hpp"
#include "ports.hpp"
#include "process.hpp"
#include "redis_server.hpp"
#include "resplock/core/lock.hpp"
#include "resplock/core/lock_options.hpp"
#include "resplock/core/observer.hpp"
#include "resplock/ports/posix.h"
#include "resplock/variants/fair_lock.hpp"
#include "resplock/variants/semaphore.hpp"

#ifndef RESPLOCK_CLI
#error "RESPLOCK_CLI must name the resplock binary"
#endif

namespace {

using resplock::Connection;
using resplock::ConnectionConfig;
using resplock::Lock;
using resplock::LockInfo;
using resplock::LockState;
using resplock::Status;
using support::Result;

support::RedisServer& server() {
    static support::RedisServer s;
    return s;
}

std::string url() {
    return server().url();
}

// A connection over the POSIX port to host:port.
struct Client {
    resplock_posix_t net;
    ConnectionConfig config;
    char buf[512];
    Connection conn;

    Client(const char* host, std::uint16_t port, std::uint32_t timeout_ms = 1000)
        : config(make(host, port, timeout_ms)),
          conn(support::posix_port(net), config, buf, sizeof buf) {}
    Client(const Client&) = delete;
    Client& operator=(const Client&) = delete;

    static ConnectionConfig make(const char* host, std::uint16_t port, std::uint32_t timeout_ms) {
        ConnectionConfig c;
        c.host = host;
        c.port = port;
        c.timeout_ms = timeout_ms;
        return c;
    }
};

// Nothing listens there: a call that reaches the network gets connect_failed.
struct Offline : Client {
    Offline() : Client("127.0.0.1", support::free_port()) {}
};

struct Online : Client {
    Online() : Client("127.0.0.1", server().port()) {}
};

// Every call of a lock on a refused key or with no token is invalid_argument without I/O.
void check_every_call_refused(Lock& lock) {
    LockInfo info;
    CHECK_EQ(lock.acquire(1000), Status::invalid_argument);
    CHECK_EQ(lock.try_acquire(1000, 100), Status::invalid_argument);
    CHECK_EQ(lock.query(info), Status::invalid_argument);
    CHECK_EQ(lock.adopt("token"), Status::ok);  // adopt checks only the token
    CHECK_EQ(lock.release(), Status::invalid_argument);
    CHECK_EQ(lock.extend(1000), Status::invalid_argument);
    CHECK(!lock.held());
}

Result cli(std::vector<std::string> args, const support::Env& env = {}) {
    args.insert(args.begin(), RESPLOCK_CLI);
    return support::run(args, env, 30);
}

// The tool exits with `code`, prints nothing on stdout and exactly one stderr line that starts
// with "resplock: " and contains `text`.
void expect_cli(const std::vector<std::string>& args, int code, const std::string& text) {
    const Result r = cli(args);
    const bool one_line = r.err.rfind("resplock: ", 0) == 0 && r.err.back() == '\n' &&
                          r.err.find('\n') == r.err.size() - 1;
    const bool ok = CHECK_EQ(r.code, code) && CHECK(one_line) &&
                    CHECK(r.err.find(text) != std::string::npos) && CHECK_EQ(r.out, std::string());
    if (!ok) {
        std::printf("      args:");
        for (const std::string& a : args)
            std::printf(" '%s'", a.c_str());
        std::printf("\n      stderr: %s      stdout: %s\n", r.err.c_str(), r.out.c_str());
    }
}

// A usage error of `status k` against the test server: nothing is sent, 64.
void expect_usage(std::vector<std::string> args, const std::string& text) {
    args.insert(args.begin(), {"-u", url()});
    expect_cli(args, 64, text);
}

// `status k` with the URL `u`.
void expect_url(const std::string& u, int code, const std::string& text) {
    expect_cli({"-u", u, "--timeout", "1000", "status", "k"}, code, text);
}

std::string temp_dir() {
    char tmpl[] = "/tmp/resplock-inputs-XXXXXX";
    const char* d = mkdtemp(tmpl);
    return d != nullptr ? d : "/tmp";
}

std::string write_file(const std::string& dir, const char* name, const std::string& text) {
    const std::string path = dir + "/" + name;
    FILE* f = std::fopen(path.c_str(), "w");
    if (f == nullptr) return path;
    std::fwrite(text.data(), 1, text.size(), f);
    std::fclose(f);
    return path;
}

}  // namespace

TEST(server_starts) {
    REQUIRE(server().running());
}

// ---------------------------------------------------------------------------------------------
// Keys

TEST(lib_key_empty_is_invalid_argument) {
    Offline c;
    Lock lock(c.conn, "");
    check_every_call_refused(lock);
}

TEST(lib_key_longer_than_max_is_invalid_argument_not_truncated) {
    Offline c;
    const std::string key(RESPLOCK_MAX_KEY_LEN + 1, 'k');
    Lock lock(c.conn, key);
    CHECK(lock.key().empty());
    check_every_call_refused(lock);
}

TEST(lib_key_of_max_length_is_accepted) {
    Online c;
    const std::string key(RESPLOCK_MAX_KEY_LEN, 'm');
    Lock lock(c.conn, key);
    REQUIRE_EQ(lock.acquire(5000), Status::ok);
    CHECK_EQ(server().cli({"GET", key}), std::string(lock.token()));
    CHECK_EQ(lock.release(), Status::ok);
}

TEST(lib_key_with_spaces_newlines_nul_and_high_bytes_is_valid) {
    Online a, b;
    const std::string_view key("in puts:\r\n\0\xff end", 17);
    Lock la(a.conn, key), lb(b.conn, key);
    REQUIRE_EQ(la.acquire(5000), Status::ok);
    CHECK_EQ(lb.acquire(5000), Status::busy);
    LockInfo info;
    CHECK_EQ(lb.query(info), Status::ok);
    CHECK(info.state == LockState::held_by_other);
    // The key is exactly these bytes: the same text cut at the NUL is another, free key.
    Lock cut(b.conn, key.substr(0, 10));
    CHECK_EQ(cut.query(info), Status::ok);
    CHECK(info.state == LockState::free);
    CHECK_EQ(la.release(), Status::ok);
    CHECK_EQ(lb.acquire(5000), Status::ok);
    CHECK_EQ(lb.release(), Status::ok);
}

// A '}' without a non-empty {tag} before it: the fair lock's queue gets a computed tag in KEY's
// slot (companion_prefix), so the key is taken as it is.
TEST(lib_fair_key_with_a_brace_but_no_hash_tag_is_valid) {
    Offline c;
    for (const char* key : {"a}b", "{}x}", "}", "a{b}c}"}) {
        resplock::FairLock lock(c.conn, key);
        CHECK_EQ(lock.key(), std::string_view(key));
    }
}

TEST(cli_fair_key_with_a_brace_but_no_hash_tag_works) {
    CHECK_EQ(cli({"-u", url(), "--fair", "run", "a}b", "--", "true"}).code, 0);
    CHECK_EQ(server().cli({"EXISTS", "a}b"}), std::string("0"));
}

TEST(cli_key_empty_gives_64) {
    expect_usage({"acquire", ""}, "KEY must not be empty");
}

TEST(cli_key_longer_than_max_gives_64) {
    expect_usage({"acquire", std::string(RESPLOCK_MAX_KEY_LEN + 1, 'k')}, "at most 128");
    CHECK_EQ(server().cli({"EXISTS", std::string(RESPLOCK_MAX_KEY_LEN + 1, 'k')}),
             std::string("0"));
}

TEST(cli_key_with_spaces_newlines_and_high_bytes_is_valid) {
    const std::string key = "cli in puts:\n\xff end";
    Result r = cli({"-u", url(), "--ttl", "5000", "acquire", key});
    REQUIRE_EQ(r.code, 0);
    const std::string token = r.out.substr(0, r.out.size() - 1);
    CHECK_EQ(server().cli({"GET", key}), token);
    // Messages stay one line: the newline in the key is shown as '?'.
    expect_cli({"-u", url(), "acquire", key}, 75, "cli in puts:?");
    r = cli({"-u", url(), "release", key, token});
    CHECK_EQ(r.code, 0);
    CHECK_EQ(server().cli({"EXISTS", key}), std::string("0"));
}

// ---------------------------------------------------------------------------------------------
// Tokens

TEST(lib_token_empty_or_longer_than_max_is_invalid_argument) {
    Offline c;
    Lock lock(c.conn, "in:token");
    CHECK_EQ(lock.adopt(""), Status::invalid_argument);
    CHECK_EQ(lock.adopt(std::string(resplock::max_token_len + 1, 't')), Status::invalid_argument);
    CHECK(lock.token().empty());
    CHECK_EQ(lock.release(), Status::invalid_argument);  // no token: nothing sent
    CHECK_EQ(lock.extend(1000), Status::invalid_argument);
    CHECK_EQ(lock.adopt(std::string(resplock::max_token_len, 't')), Status::ok);
    CHECK_EQ(lock.release(), Status::connect_failed);  // accepted: it went for the network
}

TEST(lib_token_of_another_holder_is_not_owner) {
    Online a, b;
    Lock holder(a.conn, "in:other"), intruder(b.conn, "in:other");
    REQUIRE_EQ(holder.acquire(5000), Status::ok);
    REQUIRE_EQ(intruder.adopt("0123456789abcdef0123456789abcdef"), Status::ok);
    CHECK_EQ(intruder.extend(60000), Status::not_owner);
    REQUIRE_EQ(intruder.adopt("0123456789abcdef0123456789abcdef"), Status::ok);
    CHECK_EQ(intruder.release(), Status::not_owner);
    CHECK_EQ(server().cli({"GET", "in:other"}), std::string(holder.token()));
    CHECK_EQ(holder.release(), Status::ok);
}

TEST(cli_token_empty_gives_64) {
    expect_usage({"release", "k", ""}, "TOKEN must be 1..73 characters");
}

TEST(cli_token_longer_than_max_gives_64) {
    expect_usage({"extend", "k", std::string(resplock::max_token_len + 1, 't')},
                 "TOKEN must be 1..73 characters");
}

// ---------------------------------------------------------------------------------------------
// Owner labels and client names

TEST(lib_owner_label_too_long_or_outside_the_charset_is_invalid_argument) {
    Offline c;
    Lock lock(c.conn, "in:owner");
    for (const std::string& label :
         {std::string(resplock::max_owner_len + 1, 'o'), std::string("two words"),
          std::string("a:b"), std::string("line\nbreak"), std::string("caf\xc3\xa9")}) {
        resplock::AcquireOptions o;
        o.owner = label;
        CHECK_EQ(lock.acquire(1000, o), Status::invalid_argument);
        CHECK_EQ(lock.try_acquire(1000, 100, o), Status::invalid_argument);
    }
    CHECK(lock.token().empty());
    resplock::AcquireOptions longest;
    const std::string label(resplock::max_owner_len, 'o');
    longest.owner = label;
    CHECK_EQ(lock.acquire(1000, longest), Status::connect_failed);  // valid: it went out
}

TEST(cli_owner_label_too_long_or_outside_the_charset_gives_64) {
    for (const std::string& label : {std::string(resplock::max_owner_len + 1, 'o'),
                                     std::string("two words"), std::string("a:b")}) {
        expect_usage({"--owner", label, "acquire", "k"}, "--owner: expected at most 32");
    }
}

TEST(lib_client_name_with_spaces_newlines_or_too_long_is_invalid_argument) {
    resplock::Observer o;
    for (const std::string& name : {std::string(), std::string("door 17"), std::string("a\nb"),
                                    std::string(resplock::max_client_name_len + 1, 'n')}) {
        CHECK_EQ(o.set_client_name(name.c_str()), Status::invalid_argument);
    }
    CHECK(o.client_name() == nullptr);
    CHECK_EQ(o.set_client_name("door-17"), Status::ok);
}

TEST(cli_token_of_another_holder_gives_1) {
    const Result r = cli({"-u", url(), "--ttl", "5000", "acquire", "in:cli-other"});
    REQUIRE_EQ(r.code, 0);
    const std::string wrong(32, 'f');
    expect_cli({"-u", url(), "release", "in:cli-other", wrong}, 1, "does not own");
    expect_cli({"-u", url(), "extend", "in:cli-other", wrong}, 1, "does not own");
    CHECK_EQ(server().cli({"GET", "in:cli-other"}) + "\n", r.out);
}

// ---------------------------------------------------------------------------------------------
// TTL, wait and timeout

TEST(lib_ttl_zero_or_above_max_is_invalid_argument) {
    Offline c;
    Lock lock(c.conn, "in:ttl");
    for (const std::uint32_t ttl : {0U, resplock::max_ttl_ms + 1U, 0xffffffffU}) {
        CHECK_EQ(lock.acquire(ttl), Status::invalid_argument);
        CHECK_EQ(lock.try_acquire(ttl, 0), Status::invalid_argument);
    }
    CHECK_EQ(lock.adopt("t"), Status::ok);
    CHECK_EQ(lock.extend(0), Status::invalid_argument);
    CHECK_EQ(lock.extend(resplock::max_ttl_ms + 1U), Status::invalid_argument);
    // The largest TTL is accepted: the call goes for the network.
    CHECK_EQ(lock.extend(resplock::max_ttl_ms), Status::connect_failed);
    Lock fresh(c.conn, "in:ttl");
    CHECK_EQ(fresh.acquire(resplock::max_ttl_ms), Status::connect_failed);
}

TEST(lib_semaphore_limit_zero_or_above_max_is_invalid_argument) {
    Offline c;
    for (const std::uint32_t limit : {0U, resplock::Semaphore::max_limit + 1U, 0xffffffffU}) {
        resplock::Semaphore sem(c.conn, "in:limit", limit);
        CHECK(sem.key().empty());
        CHECK_EQ(sem.limit(), 0U);
        CHECK_EQ(sem.acquire(1000), Status::invalid_argument);
        CHECK_EQ(sem.try_acquire(1000, 100), Status::invalid_argument);
        CHECK_EQ(sem.adopt("t"), Status::invalid_argument);
        CHECK_EQ(sem.release(), Status::invalid_argument);
        resplock::SemaphoreInfo info;
        CHECK_EQ(sem.query(info), Status::invalid_argument);
    }
    // The largest limit is accepted: the call goes for the network (a buffer the script fits).
    char big[4096];
    resplock::Connection conn(c.conn.port(), c.config, big, sizeof big);
    resplock::Semaphore largest(conn, "in:limit", resplock::Semaphore::max_limit);
    CHECK_EQ(largest.acquire(1000), Status::connect_failed);
}

TEST(cli_semaphore_limit_bad_values_give_64) {
    for (const char* v : {"0", "65536", "-1", "+3", " 3", "3x", "", "99999999999999999999"}) {
        expect_usage({"--limit", v, "acquire", "k"},
                     "--limit: expected a whole number of holders in 1..65535");
    }
}

TEST(lib_wait_above_max_is_invalid_argument) {
    // A wait of 2^31 ms or more would wrap the 32-bit deadline and end at once: refuse it rather
    // than return busy without having waited.
    Online a, b;
    Lock holder(a.conn, "in:wait"), waiter(b.conn, "in:wait");
    REQUIRE_EQ(holder.acquire(5000), Status::ok);
    CHECK_EQ(waiter.try_acquire(1000, resplock::max_ttl_ms + 1U), Status::invalid_argument);
    CHECK_EQ(waiter.try_acquire(1000, 0xffffffffU), Status::invalid_argument);
    CHECK_EQ(holder.release(), Status::ok);
}

TEST(lib_timeout_zero_is_timeout_without_io) {
    Client c("127.0.0.1", server().port(), 0);
    Lock lock(c.conn, "in:timeout0");
    CHECK_EQ(lock.acquire(1000), Status::timeout);
    CHECK(!c.conn.request_sent());
    CHECK_EQ(server().cli({"EXISTS", "in:timeout0"}), std::string("0"));
}

TEST(cli_ttl_zero_gives_64) {
    expect_usage({"--ttl", "0", "acquire", "k"}, "--ttl: expected at least 3 ms, got '0'");
}
TEST(lib_ttl_below_three_ms_is_granted_with_no_validity) {
    Client c("127.0.0.1", server().port());
    for (const std::uint32_t ttl : {1U, 2U}) {
        Lock lock(c.conn, ttl == 1 ? "in:ttl-lib1" : "in:ttl-lib2");
        CHECK_EQ(lock.acquire(ttl), Status::ok);
        CHECK_EQ(lock.remaining_ms(), 0U);
        CHECK(!lock.held());
    }
}
TEST(cli_ttl_below_three_ms_gives_64) {
    for (const char* v : {"1", "2"}) {
        for (const char* command : {"acquire", "run", "extend"}) {
            std::vector<std::string> args = {"--ttl", v, command, "in:ttl-short"};
            if (std::string_view(command) == "run") args.insert(args.end(), {"--", "true"});
            if (std::string_view(command) == "extend") args.emplace_back("t");
            expect_usage(args, "--ttl: expected at least 3 ms, got '" + std::string(v) +
                                   "': a lock is valid for TTL - TTL/100 - 2 ms");
        }
    }
    CHECK_EQ(server().cli({"EXISTS", "in:ttl-short"}), std::string("0"));
}
TEST(cli_ttl_negative_gives_64) {
    expect_usage({"--ttl=-5", "acquire", "k"}, "--ttl: expected a whole number");
}
TEST(cli_ttl_not_a_number_gives_64) {
    expect_usage({"--ttl", "abc", "acquire", "k"}, "--ttl: expected a whole number");
}
TEST(cli_ttl_empty_gives_64) {
    expect_usage({"--ttl", "", "acquire", "k"}, "--ttl: expected a whole number");
}
TEST(cli_ttl_trailing_junk_gives_64) {
    expect_usage({"--ttl", "5000sec", "acquire", "k"}, "--ttl: expected a whole number");
    expect_usage({"--ttl", "5000MS", "acquire", "k"}, "--ttl: expected a whole number");
    expect_usage({"--ttl", "5000 ", "acquire", "k"}, "--ttl: expected a whole number");
}
TEST(cli_ttl_leading_plus_or_blank_gives_64) {
    expect_usage({"--ttl", "+5000", "acquire", "k"}, "--ttl: expected a whole number");
    expect_usage({"--ttl", " 5000", "acquire", "k"}, "--ttl: expected a whole number");
}
TEST(cli_ttl_with_a_blank_fraction_or_unknown_unit_gives_64) {
    for (const char* v : {"5 s", "5S", "1.5s", "-5s", "5d", "s"}) {
        expect_usage({"--ttl", v, "acquire", "k"},
                     "or of ms, s, m or h (1500ms, 30s, 5m, 2h), got '" + std::string(v) + "'");
    }
}
TEST(cli_ttl_with_a_unit_is_accepted) {
    struct Case {
        const char* ttl;
        long long ms;
    };
    for (const Case c : {Case{"5ms", 5}, Case{"1500ms", 1500}, Case{"30s", 30000},
                         Case{"5m", 300000}, Case{"2h", 7200000}, Case{"596h", 2145600000}}) {
        const std::string key = std::string("in:ttl-unit-") + c.ttl;
        const Result r = cli({"-u", url(), "--ttl", c.ttl, "acquire", key});
        CHECK_EQ(r.code, 0);
        if (c.ms >= 1000) {
            const long long pttl = std::atoll(server().cli({"PTTL", key}).c_str());
            if (!CHECK(pttl > c.ms - 1000 && pttl <= c.ms)) std::printf("      %s\n", c.ttl);
        }
    }
    expect_usage({"--ttl", "597h", "acquire", "k"}, "3..2147483647");
    expect_usage({"--ttl", "2147484s", "acquire", "k"}, "3..2147483647");
}
TEST(cli_ttl_above_max_gives_64) {
    expect_usage({"--ttl", "2147483648", "acquire", "k"}, "3..2147483647");
}
TEST(cli_ttl_overflowing_64_bits_gives_64) {
    expect_usage({"--ttl", "18446744073709551617", "acquire", "k"}, "3..2147483647");
}
TEST(cli_ttl_max_is_accepted) {
    const Result r = cli({"-u", url(), "--ttl", "2147483647", "acquire", "in:ttlmax"});
    CHECK_EQ(r.code, 0);
    const long long pttl = std::atoll(server().cli({"PTTL", "in:ttlmax"}).c_str());
    CHECK(pttl > 2147480000LL);
}

TEST(cli_wait_bad_values_give_64) {
    for (const char* v : {"-1", "abc", "", "5S", "+5", "2147483648", "18446744073709551617"}) {
        expect_usage({"--wait", v, "acquire", "k"}, "--wait: expected a whole number");
    }
}
TEST(cli_wait_zero_is_one_attempt) {
    const Result r = cli({"-u", url(), "--wait", "0", "--ttl", "5000", "acquire", "in:wait0"});
    CHECK_EQ(r.code, 0);
    expect_cli({"-u", url(), "--wait", "0", "acquire", "in:wait0"}, 75, "busy");
}

TEST(cli_timeout_bad_values_give_64) {
    for (const char* v : {"0", "-1", "abc", "", "5S", "+5", "2147483648", "18446744073709551617"}) {
        expect_usage({"--timeout", v, "status", "k"}, "--timeout: expected a whole number");
    }
}

// ---------------------------------------------------------------------------------------------
// Where the server is

TEST(lib_unresolvable_host_is_no_host) {
    Client c("no-such-host.invalid", 6379);
    Lock lock(c.conn, "in:nohost");
    CHECK_EQ(lock.acquire(1000), Status::no_host);
    CHECK(!lock.held());
}

TEST(lib_refused_port_is_connect_failed) {
    Offline c;
    Lock lock(c.conn, "in:refused");
    CHECK_EQ(lock.acquire(1000), Status::connect_failed);
    CHECK(!lock.held());
}

TEST(cli_url_unknown_scheme_gives_64) {
    expect_url("http://127.0.0.1:6379", 64, "must start with redis:// or rediss://");
    expect_url("127.0.0.1:6379", 64, "must start with redis:// or rediss://");
    expect_url("", 64, "must start with redis:// or rediss://");
}
TEST(cli_url_bad_port_gives_64) {
    for (const char* p : {"0", "65536", "99999999999", "x", "", "-1", "63 79"}) {
        expect_url(std::string("redis://127.0.0.1:") + p, 64, "port must be a number in 1..65535");
    }
}
TEST(cli_url_bad_db_gives_64) {
    for (const char* db : {"x", "-1", "99999999999", "1/2", "+1"}) {
        expect_url(url() + "/" + db, 64, "database after '/' must be a number");
    }
}
TEST(cli_url_db_beyond_the_servers_count_gives_76) {
    // Valid syntax, refused by the server's SELECT: its own words are shown.
    expect_url(url() + "/16", 76, "DB index is out of range");
}
TEST(cli_url_bad_percent_escape_gives_64) {
    expect_url("redis://us%zzer:pw@127.0.0.1", 64, "bad user name");
    expect_url("redis://:pw%4@127.0.0.1", 64, "bad password");
    expect_url("redis://:pw%00@127.0.0.1", 64, "bad password");
}
TEST(cli_url_unclosed_ipv6_bracket_gives_64) {
    expect_url("redis://[::1", 64, "bad IPv6 address");
    expect_url("redis://[]:6379", 64, "bad IPv6 address");
}
TEST(cli_url_trailing_junk_gives_64) {
    expect_url("redis://[::1]x", 64, "unexpected text after ']'");
    expect_url(url() + "?db=1", 64, "query strings and fragments are not supported");
    expect_url(url() + "#x", 64, "query strings and fragments are not supported");
    expect_url("redis://bad host", 64, "bad character in the host name");
}
TEST(cli_url_unresolvable_host_gives_69) {
    expect_url("redis://no-such-host.invalid:6379", 69, "cannot resolve host name");
}
TEST(cli_url_refused_port_gives_69) {
    expect_url("redis://127.0.0.1:" + std::to_string(support::free_port()), 69,
               "connection refused");
}
TEST(cli_url_missing_host_gives_64) {
    // "redis://" or "redis://:pw@" would otherwise go to 127.0.0.1:6379 with the credentials.
    expect_url("redis://", 64, "host");
    expect_url("redis://:pw@", 64, "host");
}
TEST(cli_url_user_without_password_gives_64) {
    // "redis://name@host" would otherwise connect as the default user, ignoring the name (and
    // redis-cli reads that very form as a password).
    expect_url("redis://name@127.0.0.1:" + std::to_string(server().port()), 64, "password");
}
TEST(cli_url_one_server_twice_in_a_quorum_gives_64) {
    const std::string u = url();
    expect_usage({"-u", u, "acquire", "in:twice"}, "the same server twice in --url: ");
    expect_usage({"-u", u + "," + u, "acquire", "in:twice"}, "a quorum needs distinct servers");
    CHECK_EQ(server().cli({"EXISTS", "in:twice"}), std::string("0"));
}
TEST(cli_tls_url_without_cacert_or_tls_gives_64) {
#ifdef RESPLOCK_CLI_TLS
    expect_url("rediss://127.0.0.1:6380", 64, "rediss:// needs --cacert FILE");
#else
    expect_url("rediss://127.0.0.1:6380", 64, "rediss:// (TLS) is not supported by this build");
#endif
}
TEST(cli_tls_option_with_plain_url_gives_64) {
    expect_cli({"-u", url(), "--cacert", "/etc/ssl/certs/ca-certificates.crt", "status", "k"}, 64,
               "need a rediss:// URL");
}

// ---------------------------------------------------------------------------------------------
// Password file

TEST(cli_password_file_missing_gives_64) {
    expect_usage({"--password-file", "/nonexistent/pw", "status", "k"},
                 "cannot read password file /nonexistent/pw: No such file or directory");
}
TEST(cli_password_file_empty_gives_64) {
    const std::string dir = temp_dir();
    const std::string empty = write_file(dir, "empty", "");
    const std::string blank = write_file(dir, "blank", "\n");
    expect_usage({"--password-file", empty, "status", "k"}, "is empty");
    expect_usage({"--password-file", blank, "status", "k"}, "is empty");
    expect_usage({"--password-file=", "status", "k"}, "--password-file needs a file name");
    unlink(empty.c_str());
    unlink(blank.c_str());
    rmdir(dir.c_str());
}
TEST(cli_password_file_unreadable_gives_64) {
    const std::string dir = temp_dir();
    // A directory cannot be read as a file, even by root.
    expect_usage({"--password-file", dir, "status", "k"}, "cannot read password file");
    if (geteuid() != 0) {
        const std::string locked = write_file(dir, "locked", "pw\n");
        chmod(locked.c_str(), 0);
        expect_usage({"--password-file", locked, "status", "k"}, "Permission denied");
        unlink(locked.c_str());
    }
    rmdir(dir.c_str());
}
TEST(cli_password_file_too_long_gives_64) {
    const std::string dir = temp_dir();
    const std::string path = write_file(dir, "long", std::string(257, 'p') + "\n");
    expect_usage({"--password-file", path, "status", "k"}, "longer than 256 bytes");
    unlink(path.c_str());
    rmdir(dir.c_str());
}

// ---------------------------------------------------------------------------------------------
// Command line

TEST(cli_unknown_option_gives_64) {
    expect_usage({"--bogus", "status", "k"}, "unknown option '--bogus'");
    expect_usage({"-x", "status", "k"}, "unknown option '-x'");
}
TEST(cli_option_missing_its_value_gives_64) {
    expect_usage({"status", "k", "--ttl"}, "option --ttl needs a value");
    expect_usage({"status", "k", "-u"}, "option -u needs a value");
}
TEST(cli_flag_given_a_value_gives_64) {
    expect_usage({"--help=yes"}, "--help takes no value");
    expect_usage({"--insecure-skip-tls-verify=1", "status", "k"}, "takes no value");
}
TEST(cli_extra_argument_gives_64) {
    expect_usage({"status", "k", "extra"}, "status: too many arguments");
    expect_usage({"release", "k", "t", "extra"}, "release: too many arguments");
}
TEST(cli_missing_operand_gives_64) {
    expect_usage({"acquire"}, "acquire: missing KEY");
    expect_usage({"release", "k"}, "release: missing TOKEN");
    expect_usage({"run", "k"}, "run: missing COMMAND");
    expect_usage({"run", "k", "--"}, "run: missing COMMAND");
}
TEST(cli_unknown_command_gives_64) {
    expect_usage({"frobnicate", "k"}, "unknown command 'frobnicate'");
}
TEST(cli_missing_command_gives_64) {
    expect_usage({}, "missing command");
}
