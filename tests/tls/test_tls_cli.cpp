// The resplock command over rediss:// against a real TLS-only redis-server: the lock round trip,
// REDIS_URL, mutual TLS, refusals with one clear line and the documented exit codes, the
// insecure flag's warning, and a build without TLS refusing rediss://.

#include <cstdlib>
#include <string>
#include <utility>
#include <vector>

#include "check.hpp"
#include "process.hpp"
#include "redis_server.hpp"
#include "tls_fixture.hpp"

#ifndef RESPLOCK_CLI
#error "RESPLOCK_CLI must name the resplock binary"
#endif
#ifndef RESPLOCK_CLI_NOTLS
#error "RESPLOCK_CLI_NOTLS must name a resplock binary built without TLS"
#endif

using tls_fixture::certs;
using tls_fixture::mtls_server;
using tls_fixture::server;

namespace {

using support::Env;
using support::Result;
using support::run;

std::vector<std::string> cli(std::vector<std::string> args) {
    args.insert(args.begin(), RESPLOCK_CLI);
    return args;
}

// One line on stderr, starting "resplock: ".
bool one_error_line(const std::string& err) {
    return err.rfind("resplock: ", 0) == 0 && err.find('\n') == err.size() - 1;
}

std::string chomp(std::string s) {
    if (!s.empty() && s.back() == '\n') s.pop_back();
    return s;
}

void show(const Result& r) {
    std::printf("      exit %d after %.2f s\n      stdout: %s\n      stderr: %s\n", r.code, r.secs,
                r.out.c_str(), r.err.c_str());
}

}  // namespace

TEST_TAGGED(servers_are_ready, "slow_launcher_ok") {
    REQUIRE(certs().ok);
    CHECK(server().running());
    CHECK(mtls_server().running());
    CHECK(server().url().rfind("rediss://127.0.0.1:", 0) == 0);
}

TEST_TAGGED(acquire_status_release_over_rediss, "slow_launcher_ok") {
    const std::string url = server().url();
    Result r =
        run(cli({"--url", url, "--cacert", certs().ca, "--ttl", "20000", "acquire", "cli:tls"}));
    REQUIRE_EQ(r.code, 0);
    const std::string token = chomp(r.out);
    // LABEL:<32 hex digits>, the label being the host's name by default.
    CHECK_EQ(token.size() - (token.rfind(':') + 1), static_cast<std::size_t>(32));
    CHECK_EQ(server().cli({"GET", "cli:tls"}), token);
    CHECK(r.err.empty());

    // The URL from REDIS_URL, a host name verified against the certificate's DNS entry.
    const Env env = {{"REDIS_URL", "rediss://localhost:" + std::to_string(server().port())}};
    r = run(cli({"--cacert", certs().ca, "acquire", "cli:tls"}), env);
    CHECK_EQ(r.code, 75);  // busy
    r = run(cli({"--cacert", certs().ca, "status", "cli:tls"}), env);
    CHECK_EQ(r.code, 0);
    CHECK(r.out.rfind("held ", 0) == 0);
    r = run(cli({"--cacert", certs().ca, "extend", "cli:tls", token}), env);
    CHECK_EQ(r.code, 0);
    r = run(cli({"--cacert=" + certs().ca, "release", "cli:tls", token}), env);
    CHECK_EQ(r.code, 0);
    CHECK_EQ(server().cli({"EXISTS", "cli:tls"}), std::string("0"));
    if (check::failed()) show(r);
}

TEST_TAGGED(run_holds_the_lock_over_rediss, "slow_launcher_ok") {
    const Result r = run(cli({"--url", server().url(), "--cacert", certs().ca, "run", "cli:run",
                              "--", "/bin/sh", "-c", "test -n \"$RESPLOCK_TOKEN\" && exit 7"}));
    CHECK_EQ(r.code, 7);
    CHECK_EQ(server().cli({"EXISTS", "cli:run"}), std::string("0"));  // released after
    if (check::failed()) show(r);
}

TEST_TAGGED(wrong_ca_exits_77_with_a_clear_message, "slow_launcher_ok") {
    const Result r =
        run(cli({"--url", server().url(), "--cacert", certs().other_ca, "acquire", "cli:ca"}));
    CHECK_EQ(r.code, 77);
    CHECK(one_error_line(r.err));
    CHECK(r.err.find("certificate verify failed: ") != std::string::npos);
    CHECK(r.err.find("not correctly signed by the trusted CA") != std::string::npos);
    CHECK(r.out.empty());
    CHECK(r.secs < 5);
    CHECK_EQ(server().cli({"EXISTS", "cli:ca"}), std::string("0"));
    if (check::failed()) show(r);
}

TEST_TAGGED(wrong_server_name_exits_77, "slow_launcher_ok") {
    const Result r = run(cli({"--url", server().url(), "--cacert", certs().ca, "--tls-server-name",
                              "wrong.example", "status", "cli:name"}));
    CHECK_EQ(r.code, 77);
    CHECK(one_error_line(r.err));
    CHECK(r.err.find("certificate verify failed: ") != std::string::npos);
    if (check::failed()) show(r);
}

TEST_TAGGED(mutual_tls_with_and_without_a_client_certificate, "slow_launcher_ok") {
    const std::string url = mtls_server().url();
    Result r = run(cli({"--url", url, "--cacert", certs().ca, "--cert", certs().client, "--key",
                        certs().client_key, "acquire", "cli:mtls"}));
    CHECK_EQ(r.code, 0);
    CHECK_EQ(mtls_server().cli({"GET", "cli:mtls"}), chomp(r.out));
    if (check::failed()) show(r);

    r = run(cli({"--url", url, "--cacert", certs().ca, "status", "cli:mtls"}));
    CHECK_EQ(r.code, 69);
    CHECK(one_error_line(r.err));
    CHECK(r.err.find("TLS handshake failed") != std::string::npos);
    CHECK(r.err.find("give --cert and --key") != std::string::npos);
    CHECK(r.secs < 5);
    if (check::failed()) show(r);
}

TEST_TAGGED(insecure_flag_connects_and_warns, "slow_launcher_ok") {
    const Result r =
        run(cli({"--url", server().url(), "--insecure-skip-tls-verify", "status", "cli:insecure"}));
    CHECK_EQ(r.code, 1);  // free
    CHECK_EQ(r.out, std::string("free\n"));
    CHECK(one_error_line(r.err));
    CHECK(r.err.find("warning: --insecure-skip-tls-verify") != std::string::npos);
    if (check::failed()) show(r);
}

TEST_TAGGED(usage_errors_exit_64, "slow_launcher_ok") {
    const std::string url = server().url();
    struct Case {
        std::vector<std::string> args;
        const char* says;
    } cases[] = {
        {{"--url", url, "status", "k"}, "needs --cacert"},
        {{"--url", server().url().replace(0, 9, "redis://"), "--cacert", certs().ca, "status", "k"},
         "need a rediss:// URL"},
        {{"--url", url, "--cacert", certs().ca, "--cert", certs().client, "status", "k"},
         "--cert and --key go together"},
        {{"--url", url, "--cacert", certs().dir + "/missing.crt", "status", "k"},
         "cannot read --cacert"},
        {{"--url", url, "--cacert", certs().server_key, "status", "k"},
         "cannot parse the CA certificate"},
        {{"--url", url, "--insecure-skip-tls-verify=yes", "status", "k"}, "takes no value"},
    };
    for (const Case& c : cases) {
        const Result r = run(cli(c.args));
        CHECK_EQ(r.code, 64);
        CHECK(one_error_line(r.err));
        CHECK(r.err.find(c.says) != std::string::npos);
        if (check::failed()) {
            show(r);
            return;
        }
    }
}

TEST_TAGGED(help_documents_the_tls_options, "slow_launcher_ok") {
    const Result r = run(cli({"--help"}));
    CHECK_EQ(r.code, 0);
    for (const char* opt : {"rediss://", "--cacert FILE", "--cert FILE", "--key FILE",
                            "--tls-server-name", "--insecure-skip-tls-verify"}) {
        CHECK(r.out.find(opt) != std::string::npos);
    }
}

TEST_TAGGED(a_build_without_tls_refuses_rediss, "slow_launcher_ok") {
    const Result r = run({RESPLOCK_CLI_NOTLS, "--url", server().url(), "status", "k"});
    CHECK_EQ(r.code, 64);
    CHECK(one_error_line(r.err));
    CHECK(r.err.find("rediss:// (TLS) is not supported by this build") != std::string::npos);
    const Result h = run({RESPLOCK_CLI_NOTLS, "--help"});
    CHECK(h.out.find("this build has no TLS support") != std::string::npos);
    if (check::failed()) show(r);
}
