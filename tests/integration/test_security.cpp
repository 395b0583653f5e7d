// Security properties against a real redis-server: tokens that cannot be guessed, a user that
// may run only the commands the lock needs on only its own keys, and passwords that never show
// in a message, in the environment of `run`'s COMMAND, or in the process list.
#include <signal.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "check.hpp"
#include "helpers.hpp"
#include "ports.hpp"
#include "process.hpp"
#include "redis_server.hpp"
#include "resplock/core/lock.hpp"
#include "resplock/ports/posix.h"

#ifndef RESPLOCK_CLI
#error "RESPLOCK_CLI must name the resplock binary"
#endif

namespace {

using support::read_file;
using support::sleep_ms;
using support::wait_until;

using resplock::Connection;
using resplock::ConnectionConfig;
using resplock::Lock;
using resplock::LockInfo;
using resplock::LockState;
using resplock::Status;
using support::Env;
using support::Result;
using Clock = std::chrono::steady_clock;

// ---------------------------------------------------------------------------------------------
// Servers and clients

// The ACL user of the README: every command the lock sends or its script calls, on locks:* only.
const char* const kUser = "locker";
const char* const kUserPassword = "acl-Pw-7Hq";
const std::vector<std::string> kMinimalCommands = {"+set", "+get",  "+pttl",   "+pexpire",
                                                   "+del", "+eval", "+evalsha"};

// Its default user stays open, so that cli() can set up and inspect keys.
support::RedisServer& acl_server() {
    static support::RedisServer s;
    static const bool configured = [] {
        std::vector<std::string> line = {"ACL",
                                         "SETUSER",
                                         kUser,
                                         "on",
                                         std::string(">") + kUserPassword,
                                         "resetkeys",
                                         "~locks:*",
                                         "~{locks:*",
                                         "resetchannels",
                                         "-@all"};
        line.insert(line.end(), kMinimalCommands.begin(), kMinimalCommands.end());
        return s.cli(line) == "OK";
    }();
    (void)configured;  // servers_start checks the user
    return s;
}

bool acl(const std::string& rule) {
    return acl_server().cli({"ACL", "SETUSER", kUser, rule}) == "OK";
}

// A password with characters that URLs must escape; "Secret" is searched for in every output,
// which catches the plain and the %-encoded form (Zq7%40Secret%3A9f) alike.
const char* const kPassword = "Zq7@Secret:9f";
const char* const kPasswordEncoded = "Zq7%40Secret%3A9f";
const char* const kMark = "Secret";

// Requires kPassword for the default user.
support::RedisServer& secure_server() {
    static support::RedisServer s({"--requirepass", kPassword});
    static const bool auth = (s.set_cli_auth({"-a", kPassword}), true);
    (void)auth;
    return s;
}

struct Client {
    resplock_posix_t net;
    ConnectionConfig config;
    char buf[512];
    Connection conn;

    Client(std::uint16_t port, const char* user, const char* password, std::uint32_t db = 0)
        : config(make(port, user, password, db)),
          conn(support::posix_port(net), config, buf, sizeof buf) {}
    Client(const Client&) = delete;
    Client& operator=(const Client&) = delete;

    static ConnectionConfig make(std::uint16_t port, const char* user, const char* password,
                                 std::uint32_t db) {
        ConnectionConfig c;
        c.port = port;
        c.username = user;
        c.password = password;
        c.db = db;
        return c;
    }
};

struct Locker : Client {
    Locker() : Client(acl_server().port(), kUser, kUserPassword) {}
};

// ---------------------------------------------------------------------------------------------
// The tool

std::vector<std::string> with_cli(std::vector<std::string> args) {
    args.insert(args.begin(), RESPLOCK_CLI);
    return args;
}

Result cli(const std::vector<std::string>& args, const Env& env = {}) {
    return support::run(with_cli(args), env, 30);
}

bool contains(const std::string& s, const std::string& part) {
    return s.find(part) != std::string::npos;
}

bool one_error_line(const std::string& err) {
    return err.rfind("resplock: ", 0) == 0 && err.back() == '\n' &&
           err.find('\n') == err.size() - 1;
}

std::string trim(std::string s) {
    while (!s.empty() && s.back() == '\n')
        s.pop_back();
    return s;
}

std::string temp_dir() {
    char tmpl[] = "/tmp/resplock-sec-XXXXXX";
    const char* d = mkdtemp(tmpl);
    return d != nullptr ? d : "/tmp";
}

std::string write_file(const std::string& dir, const char* name, const std::string& text) {
    const std::string path = dir + "/" + name;
    FILE* f = std::fopen(path.c_str(), "w");
    if (f != nullptr) {
        std::fwrite(text.data(), 1, text.size(), f);
        std::fclose(f);
    }
    return path;
}

std::size_t common_prefix(const std::string& a, const std::string& b) {
    std::size_t n = 0;
    while (n < a.size() && n < b.size() && a[n] == b[n])
        ++n;
    return n;
}

bool lower_hex(const std::string& s) {
    return std::all_of(s.begin(), s.end(),
                       [](char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); });
}

// Longest prefix any two of `tokens` share (sorting puts the closest pairs next to each other).
std::size_t longest_shared_prefix(std::vector<std::string> tokens) {
    std::sort(tokens.begin(), tokens.end());
    std::size_t longest = 0;
    for (std::size_t i = 1; i < tokens.size(); ++i)
        longest = std::max(longest, common_prefix(tokens[i - 1], tokens[i]));
    return longest;
}

}  // namespace

TEST(servers_start) {
    REQUIRE(acl_server().running());
    REQUIRE(secure_server().running());
    CHECK(contains(acl_server().cli({"ACL", "LIST"}), "user locker on"));
}

// ---------------------------------------------------------------------------------------------
// Tokens

TEST(ten_thousand_tokens_are_distinct_and_uniform) {
    static_assert(RESPLOCK_TOKEN_BYTES * 8 >= 128, "tokens carry at least 128 random bits");
    static_assert(resplock::token_len == 2 * RESPLOCK_TOKEN_BYTES, "hex: two digits a byte");
    constexpr std::size_t n = 10000;
    constexpr std::size_t len = resplock::token_len;
    Client c(acl_server().port(), nullptr, nullptr);
    std::vector<std::string> tokens;
    tokens.reserve(n);
    for (std::size_t i = 0; i < n; ++i) {
        Lock lock(c.conn, "tok:" + std::to_string(i));
        REQUIRE_EQ(lock.acquire(10000), Status::ok);
        tokens.emplace_back(lock.token());
    }
    std::vector<std::size_t> count(16, 0);     // of each digit
    std::vector<std::size_t> at(len * 16, 0);  // of each digit at each position
    for (const std::string& t : tokens) {
        REQUIRE_EQ(t.size(), len);
        REQUIRE(lower_hex(t));
        for (std::size_t p = 0; p < len; ++p) {
            const char ch = t[p];
            const auto d = static_cast<std::size_t>(ch <= '9' ? ch - '0' : ch - 'a' + 10);
            ++count[d];
            ++at[p * 16 + d];
        }
    }
    std::vector<std::string> sorted = tokens;
    std::sort(sorted.begin(), sorted.end());
    CHECK(std::adjacent_find(sorted.begin(), sorted.end()) == sorted.end());

    // Shared prefixes: a given pair shares L leading digits with probability 16^-L, so some pair
    // of the n(n-1)/2 ~ 5.0e7 does with probability at most 5.0e7 * 16^-L: 1.8e-7 for L = 12.
    // The expected longest is about log16(5e7) ~ 6.4. A counter or a stuck prefix goes far beyond.
    const std::size_t longest = longest_shared_prefix(tokens);
    if (!CHECK(longest <= 11)) std::printf("      longest shared prefix: %zu\n", longest);

    // Digit counts: each digit is Binomial(n*len = 320000, 1/16): mean 20000, sd 137. A 5%
    // band (+-1000) is 7.3 sd: false failure under 3e-13 a digit, 5e-12 for all 16.
    const double total = static_cast<double>(n * len) / 16;
    for (std::size_t d = 0; d < 16; ++d) {
        const double dev = static_cast<double>(count[d]) / total - 1;
        if (!CHECK(dev > -0.05 && dev < 0.05)) std::printf("      digit %zx: %zu\n", d, count[d]);
    }
    // Per position: Binomial(10000, 1/16): mean 625, sd 24.2. A 25% band (+-156) is 6.4 sd:
    // under 1.6e-10 a cell, 8e-8 for all 32 * 16. A stuck or biased byte anywhere fails this.
    for (std::size_t i = 0; i < at.size(); ++i) {
        const double dev = static_cast<double>(at[i]) / (n / 16.0) - 1;
        if (!CHECK(dev > -0.25 && dev < 0.25))
            std::printf("      position %zu digit %zx: %zu\n", i / 16, i % 16, at[i]);
    }
    CHECK_EQ(acl_server().cli({"GET", "tok:9999"}), tokens.back());
}

TEST(cli_tokens_differ_across_processes) {
    // Separate processes started in the same instant: a PRNG seeded from the time or the pid
    // would repeat or share prefixes here. 1225 pairs: a shared 8-digit prefix by chance has
    // probability under 1225 * 16^-8 = 2.9e-7.
    std::vector<std::string> tokens;
    for (int i = 0; i < 50; ++i) {
        // No owner label: the token is the random part alone.
        const Result r = cli({"-u", acl_server().url(), "--owner=", "--ttl", "10000", "acquire",
                              "cli-tok:" + std::to_string(i)});
        REQUIRE_EQ(r.code, 0);
        const std::string t = trim(r.out);
        CHECK_EQ(t.size(), resplock::token_len);
        CHECK(lower_hex(t));
        tokens.push_back(t);
    }
    std::vector<std::string> sorted = tokens;
    std::sort(sorted.begin(), sorted.end());
    CHECK(std::adjacent_find(sorted.begin(), sorted.end()) == sorted.end());
    CHECK(longest_shared_prefix(tokens) <= 7);
}

// ---------------------------------------------------------------------------------------------
// Least privilege

TEST(acl_user_does_every_operation_on_its_keys) {
    CHECK_EQ(acl_server().cli({"SCRIPT", "FLUSH"}), std::string("OK"));
    Locker a, b;
    Lock lock(a.conn, "locks:lib"), other(b.conn, "locks:lib");
    REQUIRE_EQ(lock.acquire(10000), Status::ok);
    LockInfo info;
    CHECK_EQ(lock.query(info), Status::ok);  // EVALSHA, NOSCRIPT, then EVAL
    CHECK(info.state == LockState::held_by_me);
    CHECK_EQ(lock.extend(20000), Status::ok);
    CHECK(std::atoll(acl_server().cli({"PTTL", "locks:lib"}).c_str()) > 15000);
    CHECK_EQ(other.try_acquire(10000, 200), Status::busy);
    CHECK_EQ(lock.release(), Status::ok);
    CHECK_EQ(acl_server().cli({"EXISTS", "locks:lib"}), std::string("0"));

    // Waiting for a holder's expiry (PTTL between attempts).
    acl_server().cli({"SET", "locks:lib", "someone", "PX", "300"});
    const auto start = Clock::now();
    CHECK_EQ(other.try_acquire(10000, 3000), Status::ok);
    CHECK(Clock::now() - start < std::chrono::milliseconds(1500));
    CHECK_EQ(other.release(), Status::ok);
}

TEST(acl_user_is_refused_on_other_keys_and_never_holds) {
    Locker c;
    Lock lock(c.conn, "other:x");
    CHECK_EQ(lock.acquire(10000), Status::no_permission);
    CHECK(!lock.held());
    CHECK(lock.token().empty());
    const auto start = Clock::now();
    CHECK_EQ(lock.try_acquire(10000, 2000), Status::no_permission);  // not retried
    CHECK(Clock::now() - start < std::chrono::milliseconds(500));
    LockInfo info;
    CHECK_EQ(lock.query(info), Status::no_permission);
    REQUIRE_EQ(lock.adopt("abc"), Status::ok);
    CHECK_EQ(lock.extend(10000), Status::no_permission);
    CHECK_EQ(lock.release(), Status::no_permission);
    CHECK_EQ(acl_server().cli({"EXISTS", "other:x"}), std::string("0"));
}

// Runs, as the ACL user on locks:need, the operation that needs `command`.
Status operation_needing(const std::string& command, std::string* error = nullptr) {
    support::RedisServer& s = acl_server();
    s.cli({"DEL", "locks:need"});
    Locker c;
    Lock lock(c.conn, "locks:need");
    Status st;
    if (command == "+set") {
        st = lock.acquire(10000);
    } else {
        // The rest act on a lock held with a known token.
        s.cli({"SET", "locks:need", "tok-need", "PX", "10000"});
        (void)lock.adopt("tok-need");
        LockInfo info;
        if (command == "+eval") s.cli({"SCRIPT", "FLUSH"});  // EVALSHA finds nothing
        st = command == "+pttl"      ? lock.query(info)
             : command == "+pexpire" ? lock.extend(20000)
                                     : lock.release();  // GET, DEL, EVAL, EVALSHA
    }
    if (error != nullptr) *error = std::string(c.conn.error_text());
    return st;
}

TEST(each_command_of_the_minimal_acl_is_needed) {
    for (const std::string& plus : kMinimalCommands) {
        const std::string minus = "-" + plus.substr(1);
        REQUIRE(acl(minus));
        const Status refused = operation_needing(plus);
        if (!CHECK(refused != Status::ok)) std::printf("      without %s\n", plus.c_str());
        // Nothing changed: no key made, the held one neither extended nor deleted.
        if (plus == "+set") {
            CHECK_EQ(acl_server().cli({"EXISTS", "locks:need"}), std::string("0"));
        } else {
            CHECK_EQ(acl_server().cli({"GET", "locks:need"}), std::string("tok-need"));
            CHECK(std::atoll(acl_server().cli({"PTTL", "locks:need"}).c_str()) <= 10000);
        }
        REQUIRE(acl(plus));
        CHECK_EQ(operation_needing(plus), Status::ok);
    }
}

TEST(a_database_other_than_0_needs_select) {
    Client without(acl_server().port(), kUser, kUserPassword, 1);
    Lock a(without.conn, "locks:db");
    CHECK_EQ(a.acquire(5000), Status::no_permission);
    REQUIRE(acl("+select"));
    Client with(acl_server().port(), kUser, kUserPassword, 1);
    Lock b(with.conn, "locks:db");
    CHECK_EQ(b.acquire(5000), Status::ok);
    CHECK_EQ(b.release(), Status::ok);
    REQUIRE(acl("-select"));
}

TEST(a_command_refused_inside_the_script_is_a_permission_error) {
    // Redis 7.0 refuses a command the script calls with "ERR The user executing the script can't
    // run this command ...": the tool must call that a permission problem (77), not a protocol
    // error (76).
    const std::string u = std::string("redis://") + kUser + ":" + kUserPassword +
                          "@127.0.0.1:" + std::to_string(acl_server().port());
    for (const char* plus : {"+get", "+pttl", "+pexpire", "+del"}) {
        REQUIRE(acl(std::string("-") + (plus + 1)));
        std::string error;
        CHECK(operation_needing(plus, &error) != Status::ok);
        CHECK(contains(error, "can't run this command"));
        acl_server().cli({"SET", "locks:need", "tok-need", "PX", "10000"});
        const std::vector<std::string> op =
            std::string(plus) == "+pttl" ? std::vector<std::string>{"status", "locks:need"}
            : std::string(plus) == "+pexpire"
                ? std::vector<std::string>{"extend", "locks:need", "tok-need"}
                : std::vector<std::string>{"release", "locks:need", "tok-need"};
        std::vector<std::string> args = {"-u", u};
        args.insert(args.end(), op.begin(), op.end());
        const Result r = cli(args);
        if (!CHECK_EQ(r.code, 77) || !CHECK(contains(r.err, "not permitted")))
            std::printf("      without %s: %s", plus, r.err.c_str());
        CHECK(one_error_line(r.err));
        REQUIRE(acl(plus));
    }
}

TEST(cli_as_acl_user_works_on_its_keys_and_gets_77_elsewhere) {
    const std::string host = "127.0.0.1:" + std::to_string(acl_server().port());
    const std::string dir = temp_dir();
    const std::string pwfile = write_file(dir, "pw", std::string(kUserPassword) + "\n");
    // The password in the URL, or from a file with only the user in the URL.
    const std::vector<std::vector<std::string>> logins = {
        {"-u", std::string("redis://") + kUser + ":" + kUserPassword + "@" + host},
        {"-u", std::string("redis://") + kUser + ":@" + host, "--password-file", pwfile},
        {"-u", std::string("redis://") + kUser + "@" + host, "--password-file", pwfile},
    };
    for (const auto& login : logins) {
        auto run = [&](std::vector<std::string> args) {
            args.insert(args.begin(), login.begin(), login.end());
            return cli(args);
        };
        acl_server().cli({"SCRIPT", "FLUSH"});
        Result r = run({"--ttl", "5000", "acquire", "locks:cli"});
        REQUIRE_EQ(r.code, 0);
        const std::string token = trim(r.out);
        CHECK_EQ(acl_server().cli({"GET", "locks:cli"}), token);
        CHECK(trim(run({"status", "locks:cli"}).out).rfind("held ", 0) == 0);
        CHECK_EQ(run({"--ttl", "20000", "extend", "locks:cli", token}).code, 0);
        CHECK(std::atoll(acl_server().cli({"PTTL", "locks:cli"}).c_str()) > 15000);
        CHECK_EQ(run({"--wait", "200", "acquire", "locks:cli"}).code, 75);
        CHECK_EQ(run({"release", "locks:cli", token}).code, 0);
        CHECK_EQ(run({"status", "locks:cli"}).code, 1);
        acl_server().cli({"SET", "locks:cli", "someone", "PX", "300"});
        r = run({"--wait", "3000", "run", "locks:cli", "--", "sh", "-c", "exit 5"});
        CHECK_EQ(r.code, 5);
        CHECK_EQ(r.err, std::string());

        for (const std::vector<std::string>& op :
             std::vector<std::vector<std::string>>{{"acquire", "other:x"},
                                                   {"status", "other:x"},
                                                   {"release", "other:x", "tok"},
                                                   {"extend", "other:x", "tok"},
                                                   {"run", "other:x", "--", "true"}}) {
            r = run(op);
            const bool ok = CHECK_EQ(r.code, 77) && CHECK(one_error_line(r.err)) &&
                            CHECK(contains(r.err, "not permitted for this user (NOPERM)"));
            if (!ok) std::printf("      %s: %s", op[0].c_str(), r.err.c_str());
            CHECK(!contains(r.err, kUserPassword));
        }
        CHECK_EQ(acl_server().cli({"EXISTS", "other:x"}), std::string("0"));
    }
    unlink(pwfile.c_str());
    rmdir(dir.c_str());
}

TEST(wrong_or_missing_password_is_refused) {
    const std::uint16_t port = secure_server().port();
    {
        Client c(port, nullptr, "wrong-password");
        Lock lock(c.conn, "sec:auth");
        CHECK_EQ(lock.acquire(5000), Status::auth_failed);
        CHECK(!lock.held());
    }
    {
        Client c(port, nullptr, nullptr);
        Lock lock(c.conn, "sec:auth");
        CHECK_EQ(lock.acquire(5000), Status::auth_required);
        CHECK(!lock.held());
    }
    {
        Client c(acl_server().port(), kUser, "wrong-password");
        Lock lock(c.conn, "locks:auth");
        CHECK_EQ(lock.acquire(5000), Status::auth_failed);
    }
    CHECK_EQ(secure_server().cli({"EXISTS", "sec:auth"}), std::string("0"));
    const std::string host = "127.0.0.1:" + std::to_string(port);
    Result r = cli({"-u", "redis://:wrong-password@" + host, "acquire", "sec:auth"});
    CHECK_EQ(r.code, 77);
    CHECK(contains(r.err, "WRONGPASS"));
    r = cli({"-u", "redis://" + host, "acquire", "sec:auth"});
    CHECK_EQ(r.code, 77);
    CHECK(contains(r.err, "NOAUTH"));
    CHECK_EQ(secure_server().cli({"EXISTS", "sec:auth"}), std::string("0"));
}

// ---------------------------------------------------------------------------------------------
// Passwords stay secret

namespace {

// How the password reaches the tool.
enum class Via { url, url_encoded, env, file };

struct Invocation {
    std::vector<std::string> args;
    Env env;
};

// The tool's arguments for `scheme://<credentials>@hostpart` plus args, with the password given
// `via` (for file: a URL without it and --password-file `pwfile`).
Invocation invocation(Via via, const std::string& scheme, const std::string& hostpart,
                      const std::vector<std::string>& args, const std::string& pwfile) {
    Invocation inv;
    const std::string with_pw =
        scheme + "://:" + (via == Via::url ? kPassword : kPasswordEncoded) + "@" + hostpart;
    if (via == Via::env) {
        inv.env = {{"REDIS_URL", with_pw}};
    } else if (via == Via::file) {
        inv.args = {"-u", scheme + "://" + hostpart, "--password-file", pwfile};
    } else {
        inv.args = {"-u", with_pw};
    }
    inv.args.insert(inv.args.end(), args.begin(), args.end());
    return inv;
}

const char* via_name(Via via) {
    return via == Via::url           ? "url"
           : via == Via::url_encoded ? "url %xx"
           : via == Via::env         ? "env"
                                     : "file";
}

}  // namespace

TEST(password_never_appears_in_any_output) {
    support::RedisServer other({"--requirepass", "a-different-one"});
    support::SilentListener silent;
    REQUIRE(other.running());
    const std::string secure = "127.0.0.1:" + std::to_string(secure_server().port());
    const std::string wrong = "127.0.0.1:" + std::to_string(other.port());
    const std::string refused = "127.0.0.1:" + std::to_string(support::free_port());
    const std::string quiet = "127.0.0.1:" + std::to_string(silent.port());
    REQUIRE_EQ(cli({"-u", std::string("redis://:") + kPasswordEncoded + "@" + secure, "--ttl",
                    "30000", "acquire", "sec:busy"})
                   .code,
               0);
    const std::string dir = temp_dir();
    const std::string pwfile = write_file(dir, "pw", std::string(kPassword) + "\n");
#ifdef RESPLOCK_CLI_TLS
    const int tls_code = 69;  // handshake against a plain-text server
#else
    const int tls_code = 64;  // no TLS in this build
#endif
    struct Case {
        const char* scheme;
        std::string hostpart;
        std::vector<std::string> args;
        int code;
    };
    const std::vector<Case> cases = {
        {"redis", secure, {"status", "sec:free"}, 1},
        {"redis", secure, {"run", "sec:ok", "--", "true"}, 0},
        {"redis", secure, {"acquire", "sec:busy"}, 75},
        {"redis", secure, {"--wait", "100", "run", "sec:busy", "--", "true"}, 75},
        {"redis", secure, {"release", "sec:busy", "ffff"}, 1},
        {"redis", secure + "/16", {"status", "k"}, 76},
        {"redis", wrong, {"status", "k"}, 77},
        {"redis", wrong, {"run", "k", "--", "true"}, 77},
        {"redis", refused, {"--timeout", "200", "acquire", "k"}, 69},
        {"redis", "no-such-host.invalid:6379", {"--timeout", "200", "status", "k"}, 69},
        {"redis", quiet, {"--timeout", "200", "acquire", "k"}, 69},
        {"redis", quiet, {"--timeout", "200", "status", "k"}, 69},
        {"redis", "127.0.0.1:notaport", {"status", "k"}, 64},
        {"redis", "127.0.0.1:0", {"status", "k"}, 64},
        {"redis", "127.0.0.1:6379/x", {"status", "k"}, 64},
        {"redis", "[::1", {"status", "k"}, 64},
        {"redis", "[::1]junk", {"status", "k"}, 64},
        {"redis", "127.0.0.1:6379?x=1", {"status", "k"}, 64},
        {"redis", "bad host", {"status", "k"}, 64},
        {"http", secure, {"status", "k"}, 64},
        {"rediss", secure, {"status", "k"}, 64},
        {"rediss",
         secure,
         {"--insecure-skip-tls-verify", "--timeout", "200", "status", "k"},
         tls_code},
        {"redis", secure, {"--bogus", "status", "k"}, 64},
        {"redis", secure, {"--ttl", "0", "acquire", "k"}, 64},
        {"redis", secure, {"status"}, 64},
        {"redis", secure, {"frobnicate", "k"}, 64},
        {"redis", secure, {"--help"}, 0},
        {"redis", secure, {"--version"}, 0},
    };
    for (const Via via : {Via::url, Via::url_encoded, Via::env, Via::file}) {
        for (const Case& c : cases) {
            const Invocation inv = invocation(via, c.scheme, c.hostpart, c.args, pwfile);
            const Result r = cli(inv.args, inv.env);
            // The password file makes a bad URL no better: whatever the URL says fails first.
            const bool ok = CHECK_EQ(r.code, c.code) && CHECK(!contains(r.err, kMark)) &&
                            CHECK(!contains(r.out, kMark));
            if (!ok) {
                std::printf("      via %s:", via_name(via));
                for (const std::string& a : inv.args)
                    std::printf(" '%s'", a.c_str());
                std::printf("\n      stdout: %s      stderr: %s", r.out.c_str(), r.err.c_str());
            }
        }
    }
    unlink(pwfile.c_str());
    rmdir(dir.c_str());
}

TEST(password_stays_hidden_when_the_lock_is_lost_in_run) {
    const std::string host = "127.0.0.1:" + std::to_string(secure_server().port());
    const std::string dir = temp_dir();
    const std::string pwfile = write_file(dir, "pw", std::string(kPassword) + "\n");
    for (const Via via : {Via::url, Via::env, Via::file}) {
        const Invocation inv = invocation(
            via, "redis", host, {"--ttl", "600", "run", "sec:lost", "--", "sleep", "10"}, pwfile);
        support::Process p;
        REQUIRE(p.start(with_cli(inv.args), inv.env));
        REQUIRE(wait_until([] { return secure_server().cli({"EXISTS", "sec:lost"}) == "1"; }, 3));
        secure_server().cli({"DEL", "sec:lost"});
        const Result r = p.wait(10);
        CHECK_EQ(r.code, 70);
        CHECK(contains(r.err, "lock lost"));
        CHECK(!contains(r.err, kMark));
        CHECK(!contains(r.out, kMark));
    }
    unlink(pwfile.c_str());
    rmdir(dir.c_str());
}

TEST(a_mistyped_url_option_does_not_echo_the_password) {
    // A typo in the option name, or the URL where the command belongs, must not print it.
    const std::string u = std::string("redis://:") + kPassword + "@127.0.0.1:6379";
    for (const std::vector<std::string>& args :
         std::vector<std::vector<std::string>>{{"--URL=" + u, "status", "k"},
                                               {"--urll=" + u, "status", "k"},
                                               {u, "status", "k"},
                                               {"-U", u, "status", "k"},
                                               {"--ttl", u, "status", "k"},
                                               {"--timeout=" + u, "status", "k"}}) {
        const Result r = cli(args);
        CHECK_EQ(r.code, 64);
        if (!CHECK(!contains(r.err, kMark))) std::printf("      stderr: %s", r.err.c_str());
    }
}

TEST(run_command_gets_no_password_in_its_environment) {
    const std::string host = "127.0.0.1:" + std::to_string(secure_server().port());
    const std::string dir = temp_dir();
    const std::string pwfile = write_file(dir, "pw", std::string(kPassword) + "\n");
    for (const Via via : {Via::url, Via::url_encoded, Via::env, Via::file}) {
        const Invocation inv =
            invocation(via, "redis", host, {"run", "sec:env", "--", "env"}, pwfile);
        const Result r = cli(inv.args, inv.env);
        REQUIRE_EQ(r.code, 0);
        std::vector<std::string> ours;  // RESPLOCK_* and REDIS_URL variables COMMAND sees
        std::size_t start = 0;
        while (start < r.out.size()) {
            std::size_t end = r.out.find('\n', start);
            if (end == std::string::npos) end = r.out.size();
            const std::string line = r.out.substr(start, end - start);
            if (line.rfind("RESPLOCK_", 0) == 0 || line.rfind("REDIS_URL=", 0) == 0)
                ours.push_back(line.substr(0, line.find('=')));
            start = end + 1;
        }
        std::sort(ours.begin(), ours.end());
        // Only what resplock documents: a REDIS_URL that carries a password is not passed on.
        const std::vector<std::string> expected = {"RESPLOCK_KEY", "RESPLOCK_TOKEN"};
        CHECK(ours == expected);
        if (!CHECK(!contains(r.out, kMark)))
            std::printf("      via %s: %s", via_name(via), r.out.c_str());
    }
    unlink(pwfile.c_str());
    rmdir(dir.c_str());
}

TEST(process_list_shows_no_password_from_env_or_file) {
    const std::string host = "127.0.0.1:" + std::to_string(secure_server().port());
    const std::string dir = temp_dir();
    const std::string pwfile = write_file(dir, "pw", std::string(kPassword) + "\n");
    // COMMAND marks its start: SIGTERM is sent once it runs, when resplock passes signals on.
    const std::string started = dir + "/started";
    for (const Via via : {Via::env, Via::file}) {
        const Invocation inv = invocation(
            via, "redis", host,
            {"run", "sec:ps", "--", "sh", "-c", "touch \"$0\" && exec sleep 10", started}, pwfile);
        support::Process p;
        REQUIRE(p.start(with_cli(inv.args), inv.env));
        REQUIRE(wait_until([&] { return access(started.c_str(), F_OK) == 0; }, 10));
        CHECK_EQ(secure_server().cli({"EXISTS", "sec:ps"}), std::string("1"));
        std::string cmdline = read_file("/proc/" + std::to_string(p.pid()) + "/cmdline");
        std::replace(cmdline.begin(), cmdline.end(), '\0', ' ');
        CHECK(contains(cmdline, "sec:ps"));  // it is the right process
        if (!CHECK(!contains(cmdline, kMark))) std::printf("      cmdline: %s\n", cmdline.c_str());
        kill(p.pid(), SIGTERM);  // passed on to sleep; the lock is released
        const Result r = p.wait(5);
        const bool passed_on = CHECK_EQ(r.code, 128 + SIGTERM);
        const bool released = CHECK_EQ(secure_server().cli({"EXISTS", "sec:ps"}), std::string("0"));
        if (!passed_on || !released) std::printf("      stderr: %s", r.err.c_str());
        unlink(started.c_str());
    }
    unlink(pwfile.c_str());
    rmdir(dir.c_str());
}

TEST(password_file_first_line_without_its_line_end) {
    const std::string u = "redis://127.0.0.1:" + std::to_string(secure_server().port());
    const std::string dir = temp_dir();
    const std::string pw = kPassword;
    struct Case {
        const char* name;
        std::string text;
        int code;
    };
    const Case cases[] = {
        {"lf", pw + "\n", 1},
        {"crlf", pw + "\r\n", 1},
        {"bare", pw, 1},
        {"two-lines", pw + "\nsecond line\n", 1},
        {"blank-kept", pw + " \n", 77},  // no other trimming: the blank is part of the password
        {"empty", "", 64},
        {"empty-line", "\n", 64},
        {"crlf-only", "\r\n", 64},
        {"too-long", std::string(300, 'S') + "ecret\n", 64},
    };
    for (const Case& c : cases) {
        const std::string path = write_file(dir, c.name, c.text);
        const Result r = cli({"-u", u, "--password-file", path, "status", "sec:file"});
        const bool ok = CHECK_EQ(r.code, c.code) && CHECK(!contains(r.err, kMark)) &&
                        CHECK(!contains(r.err, "SSSS"));
        if (!ok) std::printf("      %s: %s", c.name, r.err.c_str());
        if (c.code == 64) CHECK(contains(r.err, path));  // names the file, not its contents
        unlink(path.c_str());
    }
    rmdir(dir.c_str());
}

TEST(redis_url_reaches_command_only_without_a_password) {
    const std::string secure = "127.0.0.1:" + std::to_string(secure_server().port());
    const std::string open = acl_server().url();
    const std::string dir = temp_dir();
    const std::string pwfile = write_file(dir, "pw", std::string(kPassword) + "\n");
    struct Case {
        const char* name;
        std::vector<std::string> args;  // before "run"
        std::string redis_url;
        bool kept;
    };
    const std::vector<Case> cases = {
        {"used, with a password",
         {},
         std::string("redis://:") + kPasswordEncoded + "@" + secure,
         false},
        {"used, user and password",
         {},
         std::string("redis://default:") + kPasswordEncoded + "@" + secure,
         false},
        {"a list, one with a password",
         {},
         open + ",redis://:" + kPasswordEncoded + "@" + secure,
         false},
        {"not used (--url given), with a password",
         {"-u", open},
         std::string("redis://:") + kPasswordEncoded + "@127.0.0.1:1",
         false},
        {"not used, a password without '@'", {"-u", open}, "redis://default:Zq7Secret9f", false},
        {"used, password from the file", {"--password-file", pwfile}, "redis://" + secure, true},
        {"used, no password", {}, open, true},
        {"not used, no password", {"-u", open}, "redis://127.0.0.1:1/2", true},
    };
    for (const Case& c : cases) {
        std::vector<std::string> args = c.args;
        for (const char* a :
             {"run", "sec:redis-url", "--", "sh", "-c", "echo \"[${REDIS_URL-unset}]\""}) {
            args.push_back(a);
        }
        const Result r = cli(args, {{"REDIS_URL", c.redis_url}});
        const bool ok = CHECK_EQ(r.code, 0) &&
                        CHECK_EQ(trim(r.out), c.kept ? "[" + c.redis_url + "]" : "[unset]") &&
                        CHECK(!contains(r.out + r.err, kMark));
        if (!ok)
            std::printf("      %s: stdout %s      stderr %s", c.name, r.out.c_str(), r.err.c_str());
    }
    unlink(pwfile.c_str());
    rmdir(dir.c_str());
}

TEST(no_text_that_may_hold_a_password_is_echoed) {
    // A password with nothing a URL must escape and no '@': typed as a URL without user-info,
    // in the wrong place, or where a key, a command or a file name belongs.
    const std::string pw = "Hunter2Pw";
    const std::string bare = "redis://default:" + pw;
    const std::string refused = "redis://127.0.0.1:" + std::to_string(support::free_port());
    const std::string open = acl_server().url();
    const std::string busy_key = "redis://default:" + pw + "@busy";
    REQUIRE_EQ(cli({"-u", open, "--ttl", "30000", "acquire", busy_key}).code, 0);
    struct Case {
        std::vector<std::string> args;
        Env env;
        int code;
    };
    const std::vector<Case> cases = {
        {{"-u", bare, "status", "k"}, {}, 64},
        {{"-u", bare + "/x", "status", "k"}, {}, 64},
        {{"-u", "redis://default:" + pw + "@127.0.0.1:notaport", "status", "k"}, {}, 64},
        {{"-u", "redis://127.0.0.1:6379:" + pw, "status", "k"}, {}, 64},
        {{"status", "k"}, {{"REDIS_URL", bare}}, 64},
        {{"-u", open + "," + bare, "status", "k"}, {}, 64},
        {{"status", "k"}, {{"REDIS_URL", open + "," + bare}}, 64},
        {{"--ttl", bare, "status", "k"}, {}, 64},
        {{"--wait=" + bare, "acquire", "k"}, {}, 64},
        {{"--timeout", "redis://" + pw + "@", "status", "k"}, {}, 64},
        {{"--" + bare, "status", "k"}, {}, 64},
        {{"-x" + bare, "status", "k"}, {}, 64},
        {{bare, "status", "k"}, {}, 64},
        {{"-u", open, "status", "k", bare}, {}, 64},
        {{"-u", open, "release", bare, std::string(resplock::max_token_len + 1, 't')}, {}, 64},
        {{"-u", refused, "--timeout", "200", "status", bare}, {}, 69},
        {{"-u", refused, "--timeout", "200", "acquire", bare}, {}, 69},
        {{"-u", refused, "--timeout", "200", "release", bare, "tok"}, {}, 69},
        {{"-u", refused, "--timeout", "200", "run", bare, "--", "true"}, {}, 69},
        {{"-u", open, "acquire", busy_key}, {}, 75},
        {{"-u", open, "--wait", "100", "run", busy_key, "--", "true"}, {}, 75},
        {{"-u", open, "release", busy_key, "ffff"}, {}, 1},
        {{"-u", open, "run", "k", "--", bare}, {}, 127},
        {{"-u", open, "--password-file", bare, "status", "k"}, {}, 64},
        {{"-u", "rediss://127.0.0.1:1", "--cacert", bare, "status", "k"}, {}, 64},
    };
    for (const Case& c : cases) {
        const Result r = cli(c.args, c.env);
        const bool ok = CHECK_EQ(r.code, c.code) && CHECK(!contains(r.err, pw)) &&
                        CHECK(!contains(r.out, pw)) && CHECK(!r.err.empty() || c.code == 0);
        if (!ok) {
            std::printf("      args:");
            for (const std::string& a : c.args)
                std::printf(" '%s'", a.c_str());
            std::printf("\n      stdout: %s      stderr: %s", r.out.c_str(), r.err.c_str());
        }
    }

    // The lock lost while such a KEY is held.
    support::Process p;
    REQUIRE(p.start(with_cli({"-u", open, "--ttl", "600", "run", bare, "--", "sleep", "10"})));
    REQUIRE(wait_until([&] { return acl_server().cli({"EXISTS", bare}) == "1"; }, 3));
    acl_server().cli({"DEL", bare});
    const Result r = p.wait(10);
    CHECK_EQ(r.code, 70);
    CHECK(contains(r.err, "lock lost"));
    if (!CHECK(!contains(r.err, pw))) std::printf("      stderr: %s", r.err.c_str());
    acl_server().cli({"DEL", busy_key});
}

TEST(failed_fence_script_leaves_no_key_behind) {
    // The fence script sets the key, then reads TIME for KEY:fence, which this user may not run:
    // the acquisition fails (77) after the SET. The tool gives the key back instead of leaving
    // it held, by nobody, for its whole TTL.
    const std::string u = std::string("redis://") + kUser + ":" + kUserPassword +
                          "@127.0.0.1:" + std::to_string(acl_server().port());
    acl_server().cli({"DEL", "locks:fenced", "{locks:fenced}:fence"});
    const std::string dir = temp_dir();
    const std::string marker = dir + "/ran";
    for (const std::vector<std::string>& op : std::vector<std::vector<std::string>>{
             {"--ttl", "60000", "--fence", "acquire", "locks:fenced"},
             {"--ttl", "60000", "--fence", "run", "locks:fenced", "--", "touch", marker}}) {
        std::vector<std::string> args = {"-u", u};
        args.insert(args.end(), op.begin(), op.end());
        const Result r = cli(args);
        const bool ok = CHECK_EQ(r.code, 77) && CHECK(one_error_line(r.err)) &&
                        CHECK(contains(r.err, "released"));
        if (!ok) std::printf("      %s: %s", op[3].c_str(), r.err.c_str());
        CHECK_EQ(r.out, std::string());
        CHECK_EQ(acl_server().cli({"EXISTS", "locks:fenced"}), std::string("0"));
    }
    CHECK(read_file(marker).empty() && access(marker.c_str(), F_OK) != 0);
    rmdir(dir.c_str());
}
