// The resplock command-line tool against a real redis-server: every command, option and exit
// code of its contract, run as a separate process the way shell scripts run it.
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "check.hpp"
#include "helpers.hpp"
#include "process.hpp"
#include "redis_server.hpp"
#include "resplock/core/lock.hpp"
#include "resplock/version.h"

#ifndef RESPLOCK_CLI
#error "RESPLOCK_CLI must name the resplock binary"
#endif

namespace {

using support::seconds_since;
using support::sleep_ms;
using support::wait_until;

using Clock = std::chrono::steady_clock;

using support::Env;
using support::Result;
using Proc = support::Process;

std::vector<std::string> with_cli(std::vector<std::string> args) {
    args.insert(args.begin(), RESPLOCK_CLI);
    return args;
}

// Runs resplock with `args` and waits for it.
Result cli(const std::vector<std::string>& args, const Env& env = {}, double timeout_s = 30) {
    return support::run(with_cli(args), env, timeout_s);
}

// One server for the tests that need nothing special; each test uses its own keys.
support::RedisServer& server() {
    static support::RedisServer s;
    return s;
}

std::string url() {
    return server().url();
}
std::string get(const std::string& key) {
    return server().cli({"GET", key});
}
long long pttl(const std::string& key) {
    return std::atoll(server().cli({"PTTL", key}).c_str());
}
bool exists(const std::string& key) {
    return server().cli({"EXISTS", key}) == "1";
}

// A token the tool prints: 32 lowercase hex digits, after the owner label and ':' (by default
// the host's name).
bool is_token(const std::string& s) {
    const std::size_t colon = s.rfind(':');
    const std::string hex = colon == std::string::npos ? s : s.substr(colon + 1);
    if (hex.size() != 32 || (colon != std::string::npos && colon > 32)) return false;
    for (char c : hex) {
        if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
    }
    return true;
}

std::string trim(std::string s) {
    while (!s.empty() && (s.back() == '\n' || s.back() == '\r'))
        s.pop_back();
    return s;
}

bool contains(const std::string& s, const std::string& part) {
    return s.find(part) != std::string::npos;
}

// Exactly one line, starting with "resplock: ".
bool one_error_line(const std::string& err) {
    return err.rfind("resplock: ", 0) == 0 && !err.empty() && err.back() == '\n' &&
           err.find('\n') == err.size() - 1;
}

// Acquires `key` through the tool and returns the token ("" on failure).
std::string acquire(const std::string& key, const std::string& ttl = "30000") {
    const Result r = cli({"-u", url(), "--ttl", ttl, "acquire", key});
    return r.code == 0 ? trim(r.out) : std::string();
}

// A private directory for marker and pid files.
std::string temp_dir() {
    char tmpl[] = "/tmp/resplock-cli-XXXXXX";
    const char* d = mkdtemp(tmpl);
    return d != nullptr ? d : "/tmp";
}

bool file_exists(const std::string& path) {
    return access(path.c_str(), F_OK) == 0;
}

std::string read_file(const std::string& path) {
    std::string s;
    FILE* f = std::fopen(path.c_str(), "r");
    if (f == nullptr) return s;
    char buf[256];
    size_t n;
    while ((n = std::fread(buf, 1, sizeof buf, f)) > 0)
        s.append(buf, n);
    std::fclose(f);
    return s;
}

pid_t read_pid(const std::string& path) {
    return static_cast<pid_t>(std::atol(read_file(path).c_str()));
}

bool process_alive(pid_t pid) {
    return pid > 0 && kill(pid, 0) == 0;
}

std::string redis_cli_prefix() {
    return "redis-cli -h 127.0.0.1 -p " + std::to_string(server().port());
}

// A TCP listener on 127.0.0.1 answering every read with the same bytes: a broken server.
class CannedServer {
  public:
    explicit CannedServer(std::string reply) {
        const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        sockaddr_in a{};
        a.sin_family = AF_INET;
        a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        socklen_t len = sizeof a;
        if (fd < 0 || bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 ||
            getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) != 0 || listen(fd, 8) != 0) {
            if (fd >= 0) close(fd);
            return;
        }
        port_ = ntohs(a.sin_port);
        const pid_t parent = getpid();
        pid_ = fork();
        if (pid_ == 0) {
            prctl(PR_SET_PDEATHSIG, SIGKILL);
            if (getppid() != parent) _exit(0);
            signal(SIGPIPE, SIG_IGN);
            for (;;) {
                const int c = accept(fd, nullptr, nullptr);
                if (c < 0) continue;
                char buf[1024];
                while (read(c, buf, sizeof buf) > 0) {
                    if (write(c, reply.data(), reply.size()) < 0) break;
                }
                close(c);
            }
        }
        close(fd);
    }
    ~CannedServer() {
        if (pid_ > 0) {
            kill(pid_, SIGKILL);
            waitpid(pid_, nullptr, 0);
        }
    }
    std::string url() const { return "redis://127.0.0.1:" + std::to_string(port_); }
    // With a password: the reply answers AUTH, and the lock's request is never sent.
    std::string url_with_password() const {
        return "redis://:secret@127.0.0.1:" + std::to_string(port_);
    }

  private:
    std::uint16_t port_ = 0;
    pid_t pid_ = -1;
};

}  // namespace

// ---------------------------------------------------------------------------------------------
// acquire / release / extend / status

TEST_TAGGED(server_starts, "slow_launcher_ok") {
    REQUIRE(server().running());
}

TEST_TAGGED(acquire_prints_token_stored_in_key, "slow_launcher_ok") {
    const Result r = cli({"-u", url(), "--ttl", "5000", "acquire", "cli:acq"});
    CHECK_EQ(r.code, 0);
    CHECK_EQ(r.err, std::string());
    const std::string token = trim(r.out);
    CHECK(is_token(token));
    CHECK_EQ(r.out, token + "\n");
    CHECK_EQ(get("cli:acq"), token);
    const long long ttl = pttl("cli:acq");
    CHECK(ttl > 4000 && ttl <= 5000);
}

TEST(acquire_busy_gives_75_after_wait) {
    REQUIRE(!acquire("cli:busy").empty());
    Result r = cli({"-u", url(), "acquire", "cli:busy"});
    CHECK_EQ(r.code, 75);
    CHECK(one_error_line(r.err));
    CHECK(contains(r.err, "busy"));
    CHECK_EQ(r.out, std::string());
    CHECK(r.secs < 1.0);

    r = cli({"-u", url(), "--wait", "400", "acquire", "cli:busy"});
    CHECK_EQ(r.code, 75);
    CHECK(r.secs >= 0.35);
    CHECK(r.secs < 1.4);
    CHECK(one_error_line(r.err));
}

TEST(acquire_wait_succeeds_once_holder_expires) {
    const std::string first = acquire("cli:expiring", "300");
    REQUIRE(!first.empty());
    const Result r = cli({"-u", url(), "--wait", "1500", "acquire", "cli:expiring"});
    CHECK_EQ(r.code, 0);
    const std::string second = trim(r.out);
    CHECK(is_token(second));
    CHECK(second != first);
    CHECK_EQ(get("cli:expiring"), second);
    CHECK(r.secs > 0.1);
    CHECK(r.secs < 1.4);
}

TEST_TAGGED(release_with_right_token, "slow_launcher_ok") {
    const std::string token = acquire("cli:rel");
    REQUIRE(!token.empty());
    const Result r = cli({"-u", url(), "release", "cli:rel", token});
    CHECK_EQ(r.code, 0);
    CHECK_EQ(r.err, std::string());
    CHECK_EQ(r.out, std::string());
    CHECK(!exists("cli:rel"));
}

TEST_TAGGED(release_with_wrong_token_leaves_key, "slow_launcher_ok") {
    const std::string token = acquire("cli:relwrong");
    REQUIRE(!token.empty());
    const Result r =
        cli({"-u", url(), "release", "cli:relwrong", "0123456789abcdef0123456789abcdef"});
    CHECK_EQ(r.code, 1);
    CHECK(one_error_line(r.err));
    CHECK(contains(r.err, "does not own"));
    CHECK_EQ(get("cli:relwrong"), token);
}

TEST_TAGGED(release_after_expiry_gives_1, "slow_launcher_ok") {
    const std::string token = acquire("cli:relexp", "150");
    REQUIRE(!token.empty());
    sleep_ms(300);
    const Result r = cli({"-u", url(), "release", "cli:relexp", token});
    CHECK_EQ(r.code, 1);
    CHECK(one_error_line(r.err));
}

TEST(extend_resets_ttl) {
    const std::string token = acquire("cli:ext", "2000");
    REQUIRE(!token.empty());
    const Result r = cli({"-u", url(), "--ttl", "60000", "extend", "cli:ext", token});
    CHECK_EQ(r.code, 0);
    CHECK_EQ(r.err, std::string());
    const long long ttl = pttl("cli:ext");
    CHECK(ttl > 55000 && ttl <= 60000);
    CHECK_EQ(get("cli:ext"), token);
}

TEST_TAGGED(extend_with_wrong_token_gives_1, "slow_launcher_ok") {
    const std::string token = acquire("cli:extwrong", "5000");
    REQUIRE(!token.empty());
    const Result r = cli({"-u", url(), "--ttl", "60000", "extend", "cli:extwrong",
                          "ffffffffffffffffffffffffffffffff"});
    CHECK_EQ(r.code, 1);
    CHECK(one_error_line(r.err));
    CHECK(pttl("cli:extwrong") <= 5000);
    CHECK_EQ(get("cli:extwrong"), token);

    // A key that is gone: 1 as well.
    const Result gone = cli({"-u", url(), "extend", "cli:extnone", token});
    CHECK_EQ(gone.code, 1);
    CHECK(one_error_line(gone.err));
}

TEST(status_held_and_free) {
    REQUIRE(!acquire("cli:status", "5000").empty());
    Result r = cli({"-u", url(), "status", "cli:status"});
    CHECK_EQ(r.code, 0);
    CHECK_EQ(r.out.rfind("held ", 0), 0U);
    const long long ttl = std::atoll(r.out.c_str() + 5);
    CHECK(ttl > 4000 && ttl <= 5000);
    CHECK_EQ(r.err, std::string());

    r = cli({"-u", url(), "status", "cli:status-none"});
    CHECK_EQ(r.code, 1);
    CHECK_EQ(r.out, std::string("free\n"));
    CHECK_EQ(r.err, std::string());

    // A key without a TTL is held forever: PTTL -1.
    CHECK_EQ(server().cli({"SET", "cli:status-forever", "x"}), std::string("OK"));
    r = cli({"-u", url(), "status", "cli:status-forever"});
    CHECK_EQ(r.code, 0);
    CHECK_EQ(r.out, std::string("held forever\n"));
    CHECK_EQ(r.err, std::string());
    // With a token's owner label, as the tool writes it.
    CHECK_EQ(server().cli({"SET", "cli:status-forever2", "edge-7:0123456789abcdef"}),
             std::string("OK"));
    r = cli({"-u", url(), "status", "cli:status-forever2"});
    CHECK_EQ(r.code, 0);
    CHECK_EQ(r.out, std::string("held forever edge-7\n"));
}

TEST(ttl_with_a_unit) {
    Result r = cli({"-u", url(), "--ttl", "2s", "acquire", "cli:ttl-2s"});
    REQUIRE_EQ(r.code, 0);
    r = cli({"-u", url(), "status", "cli:ttl-2s"});
    CHECK_EQ(r.code, 0);
    REQUIRE_EQ(r.out.rfind("held ", 0), 0U);
    const long long left = std::atoll(r.out.c_str() + 5);
    if (!CHECK(left > 1000 && left <= 2000)) std::printf("      status: %s", r.out.c_str());
    r = cli({"-u", url(), "--ttl=1m", "acquire", "cli:ttl-1m"});
    CHECK_EQ(r.code, 0);
    CHECK(pttl("cli:ttl-1m") > 59000 && pttl("cli:ttl-1m") <= 60000);
}

TEST_TAGGED(script_flush_between_acquire_and_release, "slow_launcher_ok") {
    const std::string token = acquire("cli:flush", "5000");
    REQUIRE(!token.empty());
    CHECK_EQ(cli({"-u", url(), "extend", "cli:flush", token}).code, 0);  // script now cached
    CHECK_EQ(server().cli({"SCRIPT", "FLUSH"}), std::string("OK"));
    const Result r = cli({"-u", url(), "release", "cli:flush", token});
    CHECK_EQ(r.code, 0);
    CHECK_EQ(r.err, std::string());
    CHECK(!exists("cli:flush"));
}

// ---------------------------------------------------------------------------------------------
// Usage

TEST_TAGGED(usage_errors_give_64, "slow_launcher_ok") {
    const std::string key129(129, 'k');
    const std::vector<std::vector<std::string>> cases = {
        {"--bogus", "acquire", "k"},
        {"-x", "acquire", "k"},
        {"acquire"},
        {"release", "k"},
        {},
        {"frobnicate", "k"},
        {"--ttl", "0", "acquire", "k"},
        {"--ttl", "2147483648", "acquire", "k"},
        {"--ttl", "abc", "acquire", "k"},
        {"--ttl=-5", "acquire", "k"},
        {"--ttl", "+5", "acquire", "k"},
        {"--ttl", "5S", "acquire", "k"},
        {"--ttl", "1.5s", "acquire", "k"},
        {"--ttl", "597h", "acquire", "k"},
        {"--ttl", "", "acquire", "k"},
        {"--wait", "-1", "acquire", "k"},
        {"--timeout", "0", "acquire", "k"},
        {"acquire", "k", "--ttl"},
        {"acquire", key129},
        {"acquire", ""},
        {"acquire", "a", "b"},
        {"status", "a", "b"},
        {"release", "k", "t", "extra"},
        {"release", "k", std::string(resplock::max_token_len + 1, 't')},
        {"run", "k"},
        {"run", "k", "--"},
        {"--help=yes"},
        {"-u", "http://127.0.0.1:1", "status", "k"},
        {"-u", "redis://127.0.0.1:0", "status", "k"},
        {"-u", "redis://127.0.0.1:99999", "status", "k"},
        {"-u", "redis://127.0.0.1:6379/x", "status", "k"},
        {"-u", "redis://[::1", "status", "k"},
        {"-u", "redis://:%zz@127.0.0.1", "status", "k"},
        {"--password-file", "/nonexistent/pw", "status", "k"},
    };
    for (const auto& args : cases) {
        std::vector<std::string> full = {"-u", url()};
        full.insert(full.end(), args.begin(), args.end());
        const Result r = cli(full);
        if (!CHECK_EQ(r.code, 64) || !CHECK(one_error_line(r.err))) {
            std::printf("      args:");
            for (const auto& a : args)
                std::printf(" '%s'", a.c_str());
            std::printf("\n      stderr: %s\n", r.err.c_str());
        }
        CHECK_EQ(r.out, std::string());
    }
    CHECK(!exists("k"));
    CHECK(!exists(key129));
}

TEST_TAGGED(key_of_128_bytes_is_accepted, "slow_launcher_ok") {
    const std::string key(128, 'm');
    const Result r = cli({"-u", url(), "--ttl", "5000", "acquire", key});
    CHECK_EQ(r.code, 0);
    CHECK_EQ(get(key), trim(r.out));
}

TEST_TAGGED(tls_url_without_tls_setup_refused, "slow_launcher_ok") {
    // With TLS built in, rediss:// needs a CA; without, it is refused outright (tests/tls covers
    // the TLS cases themselves).
    const Result r = cli({"-u", "rediss://127.0.0.1:6380", "status", "k"});
    CHECK_EQ(r.code, 64);
#ifdef RESPLOCK_CLI_TLS
    CHECK(r.err.rfind("resplock: rediss:// needs --cacert FILE", 0) == 0);
#else
    CHECK_EQ(r.err, std::string("resplock: rediss:// (TLS) is not supported by this build\n"));
#endif
}

TEST_TAGGED(bad_url_is_shown_but_its_password_masked, "slow_launcher_ok") {
    const std::string why =
        "': it must start with redis:// or rediss:// (or redis-sentinel://, rediss-sentinel://)\n";
    Result r = cli({"--url", "127.0.0.1:16379", "status", "k"});
    CHECK_EQ(r.code, 64);
    CHECK_EQ(r.err, "resplock: invalid URL in --url '127.0.0.1:16379" + why);
    r = cli({"--url", "redis//user:Hunter2Pw@h:1", "status", "k"});
    CHECK_EQ(r.code, 64);
    CHECK_EQ(r.err, "resplock: invalid URL in --url 'redis//***@h:1" + why);
    r = cli({"status", "k"}, {{"REDIS_URL", "redis:Hunter2Pw@h"}});
    CHECK_EQ(r.code, 64);
    CHECK_EQ(r.err, "resplock: invalid URL in REDIS_URL '***@h" + why);
    r = cli({"--url", "redis://:Hunter2Pw@h:x", "status", "k"});
    CHECK_EQ(r.code, 64);
    CHECK_EQ(r.err, std::string("resplock: invalid URL in --url 'redis://:***@***': the port must "
                                "be a number in 1..65535\n"));
}

TEST_TAGGED(quorum_of_one_server_twice_is_refused, "slow_launcher_ok") {
    // It would answer "busy" (75): the second SET NX finds the first one's key.
    const std::string u = url();
    const std::string where = u.substr(u.find("//") + 2) + "/0";
    const std::string said = "resplock: the same server twice in --url: " + where +
                             " (URLs 1 and 2); a quorum needs distinct servers\n";
    Result r = cli({"--url", u, "--url", u, "acquire", "cli:twice"});
    CHECK_EQ(r.code, 64);
    CHECK_EQ(r.err, said);
    CHECK_EQ(r.out, std::string());
    r = cli({"--url", u + "," + u + "/0", "acquire", "cli:twice"});
    CHECK_EQ(r.code, 64);
    CHECK_EQ(r.err, said);
    r = cli({"status", "cli:twice"}, {{"REDIS_URL", u + "," + u}});
    CHECK_EQ(r.code, 64);
    CHECK(contains(r.err, "the same server twice in REDIS_URL: "));
    CHECK(!exists("cli:twice"));
}

TEST_TAGGED(option_forms, "slow_launcher_ok") {
    // --opt=value, options after the command, -uURL.
    Result r = cli(
        {"--url=" + url(), "--ttl=7000", "--timeout=1000", "--wait=0", "acquire", "cli:forms1"});
    CHECK_EQ(r.code, 0);
    CHECK_EQ(get("cli:forms1"), trim(r.out));
    CHECK(pttl("cli:forms1") <= 7000 && pttl("cli:forms1") > 6000);

    r = cli({"acquire", "cli:forms2", "--ttl", "8000", "-u", url()});
    CHECK_EQ(r.code, 0);
    CHECK(pttl("cli:forms2") <= 8000 && pttl("cli:forms2") > 7000);

    r = cli({"-u" + url(), "status", "cli:forms2"});
    CHECK_EQ(r.code, 0);

    // "--" ends the options: a key that starts with '-'.
    r = cli({"-u", url(), "--ttl", "5000", "acquire", "--", "-dash"});
    CHECK_EQ(r.code, 0);
    CHECK_EQ(get("-dash"), trim(r.out));
}

TEST_TAGGED(help_and_version, "slow_launcher_ok") {
    Result r = cli({"--help"});
    CHECK_EQ(r.code, 0);
    CHECK_EQ(r.err, std::string());
    for (const char* word : {"acquire",   "release",   "extend",    "status",
                             "run",       "--url",     "-u",        "--password-file",
                             "--ttl",     "--wait",    "--timeout", "--help",
                             "-h",        "--version", "30000",     "2000",
                             "REDIS_URL", "64",        "69",        "70",
                             "75",        "76",        "77",        "Example"}) {
        if (!CHECK(contains(r.out, word))) std::printf("      missing: %s\n", word);
    }
    // -h before the command: the whole help; after it, the command's own.
    const Result h = cli({"-h", "status", "k"});
    CHECK_EQ(h.code, 0);
    CHECK_EQ(h.out, r.out);
    const Result s = cli({"status", "k", "-h"});
    CHECK_EQ(s.code, 0);
    CHECK_EQ(s.out, cli({"help", "status"}).out);
    CHECK(s.out.rfind("Usage: resplock [OPTIONS] status KEY\n", 0) == 0);

    r = cli({"--version"});
    CHECK_EQ(r.code, 0);
    CHECK(r.out.rfind("resplock " RESPLOCK_VERSION "\n", 0) == 0);
#ifdef RESPLOCK_CLI_TLS
    CHECK(contains(r.out, "\nTLS: mbedTLS "));
#else
    CHECK(contains(r.out, "\nTLS: none"));
#endif
    CHECK(contains(r.out, "\nlinked: dynamic\n"));
}

// ---------------------------------------------------------------------------------------------
// Where the server is

TEST_TAGGED(redis_url_environment_is_used, "slow_launcher_ok") {
    Result r = cli({"--ttl", "5000", "acquire", "cli:env"}, {{"REDIS_URL", url()}});
    CHECK_EQ(r.code, 0);
    CHECK_EQ(get("cli:env"), trim(r.out));

    // --url wins over REDIS_URL.
    r = cli({"-u", url(), "status", "cli:env"},
            {{"REDIS_URL", "redis://127.0.0.1:" + std::to_string(support::free_port())}});
    CHECK_EQ(r.code, 0);
}

TEST_TAGGED(url_db_selects_database, "slow_launcher_ok") {
    const Result r = cli({"-u", url() + "/3", "--ttl", "5000", "acquire", "cli:db"});
    REQUIRE_EQ(r.code, 0);
    CHECK_EQ(server().cli({"-n", "3", "GET", "cli:db"}), trim(r.out));
    CHECK(!exists("cli:db"));  // not in db 0
    CHECK_EQ(cli({"-u", url() + "/3", "status", "cli:db"}).code, 0);
    CHECK_EQ(cli({"-u", url() + "/", "status", "cli:db"}).code, 1);
}

TEST_TAGGED(password_in_url_file_and_refused, "slow_launcher_ok") {
    support::RedisServer secure({"--requirepass", "p@ss:w%rd/1"});
    REQUIRE(secure.running());
    secure.set_cli_auth({"-a", "p@ss:w%rd/1"});
    const std::string host = "127.0.0.1:" + std::to_string(secure.port());

    // Percent-encoded password in the URL.
    Result r = cli(
        {"-u", "redis://:p%40ss%3Aw%25rd%2F1@" + host, "--ttl", "60000", "acquire", "cli:auth"});
    CHECK_EQ(r.code, 0);
    CHECK_EQ(secure.cli({"GET", "cli:auth"}), trim(r.out));

    // The same password with '@', ':' and '/' unescaped, with the user "default".
    r = cli({"-u", "redis://default:p@ss:w%25rd/1@" + host + "/2", "--ttl", "5000", "acquire",
             "cli:auth2"});
    CHECK_EQ(r.code, 0);
    CHECK_EQ(secure.cli({"-n", "2", "GET", "cli:auth2"}), trim(r.out));

    // No password: NOAUTH.
    r = cli({"-u", "redis://" + host, "status", "cli:auth"});
    CHECK_EQ(r.code, 77);
    CHECK(one_error_line(r.err));

    // Wrong password: 77, and it is never shown.
    r = cli({"-u", "redis://:hunter2secret@" + host, "status", "cli:auth"});
    CHECK_EQ(r.code, 77);
    CHECK(one_error_line(r.err));
    CHECK(!contains(r.err, "hunter2secret"));
    CHECK(!contains(r.out, "hunter2secret"));

    // A bad URL carrying a password: the message masks it.
    r = cli({"-u", "redis://:hunter2secret@127.0.0.1:notaport", "status", "k"});
    CHECK_EQ(r.code, 64);
    CHECK(one_error_line(r.err));
    CHECK(!contains(r.err, "hunter2secret"));

    // --password-file, overriding a wrong password in the URL.
    const std::string dir = temp_dir();
    const std::string pwfile = dir + "/pw";
    FILE* f = std::fopen(pwfile.c_str(), "w");
    REQUIRE(f != nullptr);
    std::fputs("p@ss:w%rd/1\n", f);
    std::fclose(f);
    r = cli(
        {"-u", "redis://:hunter2secret@" + host, "--password-file", pwfile, "status", "cli:auth"});
    CHECK_EQ(r.code, 0);
    CHECK(r.out.rfind("held ", 0) == 0);
    r = cli({"--password-file=" + pwfile, "-u", "redis://" + host, "status", "cli:auth"});
    CHECK_EQ(r.code, 0);

    // A wrong password from the file: 77, not shown either.
    f = std::fopen(pwfile.c_str(), "w");
    REQUIRE(f != nullptr);
    std::fputs("filesecret9\n", f);
    std::fclose(f);
    r = cli({"-u", "redis://" + host, "--password-file", pwfile, "status", "cli:auth"});
    CHECK_EQ(r.code, 77);
    CHECK(!contains(r.err, "filesecret9"));
    unlink(pwfile.c_str());
    rmdir(dir.c_str());
}

TEST(unreachable_server_gives_69) {
    const std::string dead = "redis://127.0.0.1:" + std::to_string(support::free_port());
    for (const char* command : {"acquire", "status"}) {
        const Result r = cli({"-u", dead, "--timeout", "1000", command, "cli:dead"});
        CHECK_EQ(r.code, 69);
        CHECK(one_error_line(r.err));
        CHECK(r.secs < 1.5);
        CHECK_EQ(r.out, std::string());
    }
    const Result r = cli({"-u", dead, "release", "cli:dead", "abc"});
    CHECK_EQ(r.code, 69);
    CHECK(one_error_line(r.err));
}

TEST(silent_server_gives_69_within_timeout) {
    support::SilentListener silent;
    const std::string u = "redis://127.0.0.1:" + std::to_string(silent.port());
    Result r = cli({"-u", u, "--timeout", "500", "status", "cli:silent"});
    CHECK_EQ(r.code, 69);
    CHECK(one_error_line(r.err));
    CHECK(contains(r.err, "500 ms"));
    CHECK(r.secs >= 0.45);
    CHECK(r.secs < 1.5);

    // acquire: the SET went out, so the lock may have been taken (no client name: the SET is
    // the first request).
    r = cli({"-u", u, "--timeout", "500", "--no-client-name", "acquire", "cli:silent"});
    CHECK_EQ(r.code, 69);
    CHECK(one_error_line(r.err));
    CHECK(contains(r.err, "TTL"));
    CHECK_EQ(r.out, std::string());
    CHECK(r.secs < 1.5);

    r = cli({"-u", u, "--timeout", "500", "run", "cli:silent", "--", "true"});
    CHECK_EQ(r.code, 69);
    CHECK(r.secs < 1.5);
}

TEST(broken_server_replies) {
    // A malformed reply is 76 for every command; for acquire the SET may have run, and it says so
    // (--no-client-name: the first request on the connection is the command's own).
    struct Case {
        std::string reply;
        int status_code;
        const char* status_text;
        int acquire_code;
        const char* acquire_text;
    };
    const Case cases[] = {
        {"hello\r\n", 76, "protocol error", 76, "may have been taken"},
        {"$4200\r\n" + std::string(4200, 'x') + "\r\n", 76, "4096-byte buffer", 76,
         "4096-byte buffer"},
        {"*1000000000\r\n", 76, "protocol error", 76, "may have been taken"},
        {"-ERR boom goes the server\r\n", 76, "boom goes the server", 76, "boom goes the server"},
        {"-NOPERM this user has no permissions\r\n", 77, "NOPERM", 77, "NOPERM"},
        {"-LOADING Redis is loading the dataset in memory\r\n", 69, "LOADING", 69, "LOADING"},
        {"-READONLY You can't write against a read only replica.\r\n", 69, "READONLY", 69,
         "READONLY"},
        {"-BUSY Redis is busy running a script.\r\n", 69, "BUSY", 69, "BUSY"},
        {"-OOM command not allowed when used memory > 'maxmemory'.\r\n", 69, "OOM", 69, "OOM"},
        {"-ERR " + std::string(400, 'e') + "\r\n", 76, "eeee", 76, "eeee"},
        {":1\r\n", 76, "protocol error", 76, "protocol error"},
    };
    for (const Case& c : cases) {
        CannedServer canned(c.reply);
        for (const char* command : {"status", "acquire"}) {
            const bool is_status = command[0] == 's';
            const Result r =
                cli({"-u", canned.url(), "--no-client-name", "--timeout", "1000", command, "k"});
            const bool ok = CHECK_EQ(r.code, is_status ? c.status_code : c.acquire_code) &&
                            CHECK(one_error_line(r.err)) &&
                            CHECK(contains(r.err, is_status ? c.status_text : c.acquire_text)) &&
                            CHECK(r.err.size() < 400);  // server text cut to ~200 characters
            if (!ok) std::printf("      %s: stderr %s", command, r.err.c_str());
            CHECK_EQ(r.out, std::string());
            CHECK(r.secs < 1.5);
        }
    }
}

// A malformed or oversized reply means the lock may have been taken only if the request went
// out. A reply to the connection's set-up (AUTH here) comes before the request is sent: then the
// tool must say that it was not sent, never that the lock may have been taken, for every lock
// kind it drives. Without AUTH (and without CLIENT SETNAME) the request goes out, and it must say
// that the lock may have been taken.
TEST(broken_reply_says_the_lock_may_be_taken_only_when_the_request_went_out) {
    const std::string replies[] = {"hello\r\n", "$4200\r\n" + std::string(4200, 'x') + "\r\n"};
    for (const std::string& reply : replies) {
        const CannedServer a(reply);
        const CannedServer b(reply);
        const CannedServer c(reply);
        for (const bool sent : {false, true}) {
            const auto u = [sent](const CannedServer& s) {
                return sent ? s.url() : s.url_with_password();
            };
            const struct {
                const char* name;
                std::vector<std::string> args;
            } kinds[] = {{"plain", {"-u", u(a)}},
                         {"fair", {"--fair", "-u", u(a)}},
                         {"quorum", {"-u", u(a) + "," + u(b) + "," + u(c)}}};
            for (const auto& kind : kinds) {
                std::vector<std::string> args = kind.args;
                args.insert(args.end(), {"--no-client-name", "--timeout", "1000", "acquire", "k"});
                const Result r = cli(args);
                const bool ok = CHECK_EQ(r.code, 76) && CHECK(one_error_line(r.err)) &&
                                CHECK_EQ(contains(r.err, "may have been taken"), sent) &&
                                CHECK_EQ(contains(r.err, "not sent"), !sent);
                if (!ok) {
                    std::printf("      %s, request %s: stderr %s", kind.name,
                                sent ? "sent" : "not sent", r.err.c_str());
                }
                CHECK_EQ(r.out, std::string());
            }
        }
    }
}

// ---------------------------------------------------------------------------------------------
// run

TEST_TAGGED(run_propagates_exit_status_and_releases, "slow_launcher_ok") {
    Result r = cli({"-u", url(), "run", "cli:run", "--", "sh", "-c", "exit 3"});
    CHECK_EQ(r.code, 3);
    CHECK_EQ(r.err, std::string());
    CHECK(!exists("cli:run"));

    r = cli({"-u", url(), "run", "cli:run", "--", "sh", "-c", "kill -TERM $$"});
    CHECK_EQ(r.code, 143);
    CHECK(!exists("cli:run"));

    r = cli({"-u", url(), "run", "cli:run", "--", "true"});
    CHECK_EQ(r.code, 0);
    CHECK(!exists("cli:run"));

    // Without "--", COMMAND starts after KEY.
    r = cli({"-u", url(), "run", "cli:run", "echo", "hi"});
    CHECK_EQ(r.code, 0);
    CHECK_EQ(r.out, std::string("hi\n"));

    // Options between KEY and "--".
    r = cli({"run", "cli:run", "-u", url(), "--ttl", "4000", "--", "sh", "-c",
             redis_cli_prefix() + " PTTL cli:run"});
    CHECK_EQ(r.code, 0);
    const long long ttl = std::atoll(r.out.c_str());
    CHECK(ttl > 3000 && ttl <= 4000);
}

TEST_TAGGED(run_exports_token_and_key, "slow_launcher_ok") {
    const std::string script = "echo \"$RESPLOCK_KEY $RESPLOCK_TOKEN $(" + redis_cli_prefix() +
                               " GET \"$RESPLOCK_KEY\")\"";
    const Result r = cli({"-u", url(), "run", "cli:env run", "--", "sh", "-c", script});
    CHECK_EQ(r.code, 0);
    const std::string out = trim(r.out);
    REQUIRE(out.rfind("cli:env run ", 0) == 0);
    const std::string rest = out.substr(12);
    const std::size_t space = rest.find(' ');
    REQUIRE(space != std::string::npos);
    const std::string token = rest.substr(0, space);
    CHECK(is_token(token));
    CHECK_EQ(rest.substr(space + 1), token);
    CHECK(!exists("cli:env run"));
}

TEST_TAGGED(run_does_not_start_command_when_busy, "slow_launcher_ok") {
    REQUIRE(!acquire("cli:runbusy").empty());
    const std::string dir = temp_dir();
    const std::string marker = dir + "/marker";
    const Result r =
        cli({"-u", url(), "--wait", "200", "run", "cli:runbusy", "--", "touch", marker});
    CHECK_EQ(r.code, 75);
    CHECK(one_error_line(r.err));
    CHECK(!file_exists(marker));
    rmdir(dir.c_str());
}

TEST_TAGGED(run_command_not_found_or_not_executable, "slow_launcher_ok") {
    Result r = cli({"-u", url(), "run", "cli:notfound", "--", "/nonexistent/command-xyz"});
    CHECK_EQ(r.code, 127);
    CHECK(one_error_line(r.err));
    CHECK(contains(r.err, "cannot run"));
    CHECK(!exists("cli:notfound"));

    r = cli({"-u", url(), "run", "cli:notfound", "--", "resplock-no-such-command-xyz"});
    CHECK_EQ(r.code, 127);

    const std::string dir = temp_dir();
    const std::string plain = dir + "/plain";
    FILE* f = std::fopen(plain.c_str(), "w");
    REQUIRE(f != nullptr);
    std::fputs("#!/bin/sh\nexit 0\n", f);
    std::fclose(f);
    chmod(plain.c_str(), 0644);
    r = cli({"-u", url(), "run", "cli:notfound", "--", plain});
    CHECK_EQ(r.code, 126);
    CHECK(one_error_line(r.err));
    CHECK(!exists("cli:notfound"));
    unlink(plain.c_str());
    rmdir(dir.c_str());
}

TEST(run_renews_lock_while_command_runs) {
    Proc p;
    REQUIRE(
        p.start(with_cli({"-u", url(), "--ttl", "600", "run", "cli:renew", "--", "sleep", "2"})));
    const auto start = Clock::now();
    CHECK(wait_until([] { return exists("cli:renew"); }, 1.0));
    const std::string token = get("cli:renew");
    CHECK(is_token(token));
    while (seconds_since(start) < 1.5)
        sleep_ms(20);
    CHECK_EQ(get("cli:renew"), token);
    const long long ttl = pttl("cli:renew");
    CHECK(ttl > 0 && ttl <= 600);
    const Result r = p.wait(10);
    CHECK_EQ(r.code, 0);
    CHECK_EQ(r.err, std::string());
    CHECK(r.secs >= 1.9);
    CHECK(!exists("cli:renew"));
}

// The key is deleted (or taken over) during the run: COMMAND is stopped and resplock exits 70.
static void check_lock_lost(bool take_over) {
    const std::string key = take_over ? "cli:lost-taken" : "cli:lost-deleted";
    const std::string dir = temp_dir();
    const std::string pidfile = dir + "/pid";
    Proc p;
    REQUIRE(p.start(with_cli({"-u", url(), "--ttl", "900", "run", key, "--", "sh", "-c",
                              "echo $$ > " + pidfile + "; exec sleep 10"})));
    REQUIRE(wait_until([&] { return exists(key) && read_pid(pidfile) > 0; }, 2.0));
    const pid_t child = read_pid(pidfile);
    CHECK(process_alive(child));
    if (take_over) {
        server().cli({"SET", key, "someone-else", "PX", "30000"});
    } else {
        server().cli({"DEL", key});
    }
    const auto lost_at = Clock::now();
    const Result r = p.wait(10);
    CHECK_EQ(r.code, 70);
    CHECK(one_error_line(r.err));
    CHECK(contains(r.err, "lock lost"));
    CHECK(seconds_since(lost_at) < 0.3 + 2.0 + 0.7);
    CHECK(!process_alive(child));
    if (take_over) {
        CHECK_EQ(get(key), std::string("someone-else"));
    } else {
        CHECK(!exists(key));
    }
    unlink(pidfile.c_str());
    rmdir(dir.c_str());
}

TEST_TAGGED(run_lock_lost_when_key_deleted, "slow_launcher_ok") {
    check_lock_lost(false);
}
TEST_TAGGED(run_lock_lost_when_key_taken_over, "slow_launcher_ok") {
    check_lock_lost(true);
}

TEST_TAGGED(run_lock_lost_when_server_goes_away, "slow_launcher_ok") {
    // Renewals fail (connection refused) until the local validity runs out: lost, 70.
    support::RedisServer doomed;
    REQUIRE(doomed.running());
    const std::string key = "cli:lost-server";
    Proc p;
    REQUIRE(p.start(with_cli({"-u", doomed.url(), "--ttl", "1200", "--timeout", "500", "run", key,
                              "--", "sleep", "10"})));
    REQUIRE(wait_until([&] { return doomed.cli({"EXISTS", key}) == "1"; }, 2.0));
    const auto start = Clock::now();
    doomed.kill();
    const Result r = p.wait(10);
    CHECK_EQ(r.code, 70);
    CHECK(one_error_line(r.err));
    CHECK(contains(r.err, "lock lost"));
    CHECK(contains(r.err, "TTL ran out"));
    // Validity ends within the 1.2 s TTL; SIGTERM ends sleep at once.
    CHECK(seconds_since(start) < 1.2 + 1.0);
}

TEST_TAGGED(run_lock_lost_command_ignoring_sigterm_is_killed, "slow_launcher_ok") {
    // The key is gone, so no validity is left to grant a grace period: SIGKILL at once, as soon
    // as the next renewal (ttl/3) finds out.
    const std::string dir = temp_dir();
    const std::string pidfile = dir + "/pid";
    Proc p;
    REQUIRE(p.start(
        with_cli({"-u", url(), "--ttl", "600", "run", "cli:lost-stubborn", "--", "sh", "-c",
                  "trap '' TERM; echo $$ > " + pidfile + "; while :; do sleep 0.05; done"})));
    REQUIRE(wait_until([&] { return read_pid(pidfile) > 0; }, 2.0));
    const pid_t child = read_pid(pidfile);
    server().cli({"DEL", "cli:lost-stubborn"});
    const auto lost_at = Clock::now();
    const Result r = p.wait(10);
    CHECK_EQ(r.code, 70);
    const double secs = seconds_since(lost_at);
    if (!CHECK(secs < 0.2 + 1.3)) std::printf("      stopped %.2f s after the loss\n", secs);
    CHECK(!process_alive(child));
    unlink(pidfile.c_str());
    rmdir(dir.c_str());
}

TEST_TAGGED(run_forwards_sigterm, "slow_launcher_ok") {
    const std::string dir = temp_dir();
    const std::string marker = dir + "/ready";
    Proc p;
    REQUIRE(p.start(
        with_cli({"-u", url(), "run", "cli:sigterm", "--", "sh", "-c",
                  "trap 'exit 7' TERM; touch " + marker + "; while :; do sleep 0.05; done"})));
    REQUIRE(wait_until([&] { return file_exists(marker); }, 2.0));
    CHECK(exists("cli:sigterm"));
    kill(p.pid(), SIGTERM);
    const Result r = p.wait(5);
    CHECK_EQ(r.code, 7);
    // Passed on to COMMAND's whole group: its `sleep` dies of it too (and the shell may say so).
    CHECK(!contains(r.err, "resplock:"));
    CHECK(r.secs < 3.0);
    CHECK(!exists("cli:sigterm"));
    unlink(marker.c_str());
    rmdir(dir.c_str());
}

TEST_TAGGED(killed_holder_lock_expires_by_ttl, "slow_launcher_ok") {
    const std::string dir = temp_dir();
    const std::string pidfile = dir + "/pid";
    Proc p;
    REQUIRE(p.start(with_cli({"-u", url(), "--ttl", "1000", "run", "cli:killed", "--", "sh", "-c",
                              "echo $$ > " + pidfile + "; exec sleep 30"})));
    REQUIRE(wait_until([&] { return exists("cli:killed") && read_pid(pidfile) > 0; }, 2.0));
    const pid_t orphan = read_pid(pidfile);
    kill(p.pid(), SIGKILL);
    const Result r = p.wait(5);
    CHECK_EQ(r.code, 128 + SIGKILL);
    const auto killed_at = Clock::now();
    CHECK(exists("cli:killed"));
    CHECK(wait_until([] { return !exists("cli:killed"); }, 1.2));
    CHECK(seconds_since(killed_at) < 1.2);
    const Result again = cli({"-u", url(), "--ttl", "5000", "acquire", "cli:killed"});
    CHECK_EQ(again.code, 0);
    CHECK_EQ(get("cli:killed"), trim(again.out));
    if (orphan > 0) kill(orphan, SIGKILL);
    unlink(pidfile.c_str());
    rmdir(dir.c_str());
}

TEST(run_is_mutually_exclusive) {
    server().cli({"DEL", "cli:counter"});
    const std::string rc = redis_cli_prefix();
    const std::string critical =
        "v=$(" + rc + " GET cli:counter); " + rc + " SET cli:counter $((${v:-0}+1)) >/dev/null";
    std::string quoted = "'";
    for (char c : critical)
        quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
    quoted += "'";
    const std::string loop =
        "i=0; while [ $i -lt 25 ]; do i=$((i+1)); '" + std::string(RESPLOCK_CLI) + "' -u " + url() +
        " --wait 20000 run cli:counterlock -- sh -c " + quoted + " || exit 1; done";
    Proc workers[4];
    for (Proc& w : workers)
        REQUIRE(w.start({"sh", "-c", loop}));
    for (Proc& w : workers) {
        const Result r = w.wait(50);
        CHECK_EQ(r.code, 0);
        if (r.code != 0) std::printf("      stderr: %s\n", r.err.c_str());
    }
    CHECK_EQ(server().cli({"GET", "cli:counter"}), std::string("100"));
    CHECK(!exists("cli:counterlock"));
}
