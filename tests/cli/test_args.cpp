// In-process tests of the tool's command line (tools/resplock/args.hpp): every option of the
// README's table in each of its forms, flags that refuse values, missing values, unknown options,
// the "--" rules, the command and its operands, the numbers, KEY and TOKEN rows of the invalid-
// input table, and what complete_options() adds (REDIS_URL, the default URL, the options that
// apply to some commands only). tests/integration/test_inputs.cpp runs the same rows through the
// whole tool; here each form is checked for what it sets, not only for its exit code.
#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "args.hpp"
#include "capture.hpp"
#include "check.hpp"
#include "exit_codes.hpp"
#include "resplock/core/config.h"
#include "resplock/core/lock.hpp"
#include "resplock/version.h"
#ifdef RESPLOCK_CLI_TLS
#include "mbedtls/version.h"
#endif

namespace {

using cli_test::contains;
using resplock_cli::Command;
using resplock_cli::exit_usage;

constexpr int go_on = -1;  // parse_args / complete_options: no exit, the tool goes on
constexpr const char max_text[] = "2147483647";

#define CHECK_TEXT(a, b) CHECK_EQ(std::string_view(a), std::string_view(b))

// One command line, read as the tool reads it: parse_args(), then complete_options() with
// `redis_url` as REDIS_URL's value. The options point into `words`: a Parsed is never copied.
struct Parsed {
    std::vector<std::string> words;
    std::vector<char*> argv;
    resplock_cli::Options o;
    int code = go_on;
    std::string out;
    std::string err;

    explicit Parsed(std::vector<std::string> args, const char* redis_url = nullptr)
        : words(std::move(args)) {
        words.insert(words.begin(), "resplock");
        for (std::string& w : words)
            argv.push_back(w.data());
        argv.push_back(nullptr);
        const cli_test::Output output = cli_test::capture([&] {
            code = resplock_cli::parse_args(static_cast<int>(words.size()), argv.data(), o);
            if (code == go_on) code = resplock_cli::complete_options(o, redis_url);
        });
        out = output.out;
        err = output.err;
    }
    Parsed(const Parsed&) = delete;
    Parsed& operator=(const Parsed&) = delete;

    // run's COMMAND [ARGS...].
    std::vector<std::string> command() const {
        std::vector<std::string> c;
        for (char** a = o.run_argv; a != nullptr && *a != nullptr; ++a)
            c.emplace_back(*a);
        return c;
    }

    void show() const {
        std::printf("      args:");
        for (std::size_t i = 1; i < words.size(); ++i)
            std::printf(" '%s'", words[i].c_str());
        std::printf("\n      exit %d, stderr: %s      stdout: %.200s\n", code, err.c_str(),
                    out.c_str());
    }
};

// The line is accepted, silently.
bool accepted(const Parsed& p) {
    const bool ok = CHECK_EQ(p.code, go_on) && CHECK(p.err.empty()) && CHECK(p.out.empty());
    if (!ok) p.show();
    return ok;
}

// The line is a usage error (64): one "resplock: " line that contains `text`, nothing on stdout.
bool refused(const Parsed& p, const std::string& text) {
    const bool ok = CHECK_EQ(p.code, exit_usage) && CHECK(cli_test::one_message(p.err)) &&
                    CHECK(contains(p.err, text)) && CHECK(p.out.empty());
    if (!ok) {
        std::printf("      expected: %s\n", text.c_str());
        p.show();
    }
    return ok;
}

// The value options and their lower bound (the upper one is 2147483647 for all).
struct NumberOption {
    const char* name;
    const char* lo;
};
constexpr NumberOption number_options[] = {
    {"ttl", "3"}, {"wait", "0"}, {"timeout", "1"}, {"once-per", "1"}};

std::uint32_t number_of(const resplock_cli::Options& o, std::string_view name) {
    if (name == "ttl") return o.ttl_ms;
    if (name == "wait") return o.wait_ms;
    if (name == "timeout") return o.timeout_ms;
    return o.once_per_ms;
}

// acquire takes every number option (status would refuse --once-per).
std::vector<std::string> with_acquire(std::vector<std::string> options) {
    options.insert(options.end(), {"acquire", "k"});
    return options;
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// Defaults

TEST(defaults_without_options) {
    const Parsed p({"status", "k"});
    REQUIRE(accepted(p));
    CHECK(p.o.command == Command::status);
    CHECK_TEXT(p.o.command_name, "status");
    CHECK_EQ(p.o.operand_count, 1);
    CHECK_TEXT(p.o.operands[0], "k");
    CHECK_TEXT(p.o.key_shown.text, "k");
    REQUIRE_EQ(p.o.url_count, 1);
    CHECK_TEXT(p.o.urls[0], "redis://127.0.0.1:6379");
    CHECK_TEXT(p.o.url_source, "--url");
    CHECK(p.o.password_file == nullptr);
    CHECK(p.o.cacert == nullptr && p.o.cert == nullptr && p.o.key == nullptr);
    CHECK(p.o.tls_server_name == nullptr);
    CHECK(!p.o.insecure && !p.o.fence && !p.o.wake);
    CHECK_EQ(p.o.ttl_ms, 30000U);
    CHECK_EQ(p.o.wait_ms, 0U);
    CHECK_EQ(p.o.timeout_ms, 2000U);
    CHECK_EQ(p.o.once_per_ms, 0U);
    CHECK(p.o.run_argv == nullptr);
}

// ---------------------------------------------------------------------------------------------
// --url and -u

TEST(url_in_every_form) {
    const std::string u = "redis://h:6380/2";
    for (const std::vector<std::string>& args :
         std::vector<std::vector<std::string>>{{"-u", u, "status", "k"},
                                               {"-u" + u, "status", "k"},
                                               {"--url", u, "status", "k"},
                                               {"--url=" + u, "status", "k"},
                                               {"status", "k", "-u", u},
                                               {"status", "k", "--url=" + u}}) {
        const Parsed p(args, "redis://ignored:1");
        if (!accepted(p)) continue;
        CHECK_EQ(p.o.url_count, 1);
        CHECK_EQ(p.o.urls[0], std::string_view(u));
        CHECK_TEXT(p.o.url_source, "--url");
    }
}

TEST(url_given_up_to_five_times) {
    std::vector<std::string> args;
    for (int i = 1; i <= RESPLOCK_MAX_SERVERS; ++i) {
        args.insert(args.end(), {"-u", "redis://h" + std::to_string(i)});
    }
    {
        const Parsed p(with_acquire(args));
        REQUIRE(accepted(p));
        REQUIRE_EQ(p.o.url_count, RESPLOCK_MAX_SERVERS);
        CHECK_TEXT(p.o.urls[0], "redis://h1");
        CHECK_TEXT(p.o.urls[RESPLOCK_MAX_SERVERS - 1], "redis://h5");
    }
    args.insert(args.end(), {"--url", "redis://h6"});
    refused(Parsed(with_acquire(args)), "too many servers: at most 5 URLs");
}

TEST(url_comma_lists) {
    struct Case {
        std::string value;
        std::vector<std::string> urls;
    };
    const std::vector<Case> cases = {
        {"redis://a,redis://b", {"redis://a", "redis://b"}},
        {"redis://a,rediss://b,REDIS://c", {"redis://a", "rediss://b", "REDIS://c"}},
        // A comma not followed by a scheme stays in its URL: in a password, or a host list that
        // the URL check refuses later.
        {"redis://:p,w@a:1,redis://:x,,y@b", {"redis://:p,w@a:1", "redis://:x,,y@b"}},
        {"redis://a,b", {"redis://a,b"}},
        {"redis://a,", {"redis://a,"}},
        {",redis://a", {"", "redis://a"}},
        {"", {""}},
    };
    for (const Case& c : cases) {
        const Parsed p({"--url=" + c.value, "status", "k"});
        if (!accepted(p) || !CHECK_EQ(p.o.url_count, static_cast<int>(c.urls.size()))) {
            std::printf("      value: %s\n", c.value.c_str());
            continue;
        }
        for (std::size_t i = 0; i < c.urls.size(); ++i)
            CHECK_EQ(p.o.urls[i], std::string_view(c.urls[i]));
    }
    // Lists and repeated options add up, to five in all.
    const Parsed p(
        {"-u", "redis://a,redis://b", "--url=redis://c,redis://d", "-uredis://e", "status", "k"});
    REQUIRE(accepted(p));
    CHECK_EQ(p.o.url_count, 5);
    CHECK_TEXT(p.o.urls[4], "redis://e");
    refused(Parsed({"-u", "redis://a,redis://b,redis://c", "-u", "redis://d,redis://e,redis://f",
                    "status", "k"}),
            "too many servers");
    refused(Parsed({"--url=redis://1,redis://2,redis://3,redis://4,redis://5,redis://6", "status",
                    "k"}),
            "too many servers");
}

// ---------------------------------------------------------------------------------------------
// Value options in both forms

TEST(password_file_in_both_forms) {
    for (const std::vector<std::string>& args :
         std::vector<std::vector<std::string>>{{"--password-file", "/p w", "status", "k"},
                                               {"--password-file=/p w", "status", "k"},
                                               {"status", "k", "--password-file", "/p w"}}) {
        const Parsed p(args);
        if (accepted(p)) CHECK_TEXT(p.o.password_file, "/p w");
    }
    refused(Parsed({"--password-file=", "status", "k"}), "--password-file needs a file name");
    refused(Parsed({"--password-file", "", "status", "k"}), "--password-file needs a file name");
}

TEST(tls_options_in_both_forms) {
    const Parsed spaced({"--cacert", "ca.pem", "--cert", "c.pem", "--key", "k.pem",
                         "--tls-server-name", "redis.example", "status", "k"});
    const Parsed joined({"--cacert=ca.pem", "--cert=c.pem", "--key=k.pem",
                         "--tls-server-name=redis.example", "status", "k"});
    for (const Parsed* p : {&spaced, &joined}) {
        if (!accepted(*p)) continue;
        CHECK_TEXT(p->o.cacert, "ca.pem");
        CHECK_TEXT(p->o.cert, "c.pem");
        CHECK_TEXT(p->o.key, "k.pem");
        CHECK_TEXT(p->o.tls_server_name, "redis.example");
    }
    for (const char* name : {"cacert", "cert", "key", "tls-server-name"}) {
        const std::string option = std::string("--") + name;
        refused(Parsed({option + "=", "status", "k"}), option + " needs a value");
        refused(Parsed({option, "", "status", "k"}), option + " needs a value");
    }
}

TEST(numbers_in_both_forms) {
    for (const NumberOption& n : number_options) {
        const std::string option = std::string("--") + n.name;
        const Parsed spaced(with_acquire({option, "1234"}));
        const Parsed joined(with_acquire({option + "=4321"}));
        if (accepted(spaced)) CHECK_EQ(number_of(spaced.o, n.name), 1234U);
        if (accepted(joined)) CHECK_EQ(number_of(joined.o, n.name), 4321U);
    }
}

TEST(numbers_at_their_bounds_are_accepted) {
    for (const NumberOption& n : number_options) {
        const std::string option = std::string("--") + n.name;
        for (const char* v : {n.lo, max_text}) {
            const Parsed p(with_acquire({option, v}));
            if (accepted(p)) CHECK_EQ(std::to_string(number_of(p.o, n.name)), std::string(v));
        }
        // Leading zeros are digits like any other.
        const Parsed p(with_acquire({option + "=007"}));
        if (accepted(p)) CHECK_EQ(number_of(p.o, n.name), 7U);
    }
}

TEST(numbers_with_signs_blanks_junk_or_out_of_range_are_refused) {
    for (const NumberOption& n : number_options) {
        const std::string option = std::string("--") + n.name;
        std::vector<std::string> bad = {"-1",
                                        "-5",
                                        "+5",
                                        " 5",
                                        "5 ",
                                        "5 s",
                                        "5S",
                                        "5MS",
                                        "5Ms",
                                        "5sec",
                                        "5d",
                                        "5us",
                                        "5ms5",
                                        "1.5s",
                                        "-5s",
                                        "+5s",
                                        "s",
                                        "ms",
                                        "abc",
                                        "",
                                        "0x10",
                                        "1e3",
                                        "5.0",
                                        "1,000",
                                        "2147483648",
                                        "4294967296",
                                        "18446744073709551617",
                                        "99999999999999999999999"};
        if (std::string_view(n.lo) == "1") bad.emplace_back("0");  // --ttl's: see below
        for (const std::string& v : bad) {
            const std::string text = option + ": expected a whole number of milliseconds in " +
                                     n.lo + ".." + max_text +
                                     ", or of ms, s, m or h (1500ms, 30s, 5m, 2h), got '" + v + "'";
            refused(Parsed(with_acquire({option, v})), text);
            refused(Parsed(with_acquire({option + "=" + v})), text);
        }
    }
}

TEST(times_take_a_unit) {
    struct Case {
        const char* text;
        std::uint32_t ms;
    };
    const Case cases[] = {
        {"1500ms", 1500},
        {"30s", 30000},
        {"5m", 300000},
        {"2h", 7200000},
        {"1500", 1500},  // no unit: milliseconds
        {"007s", 7000},
        {"2147483647ms", 2147483647U},
        {"2147483s", 2147483000U},
        {"35791m", 2147460000U},
        {"596h", 2145600000U},
    };
    for (const NumberOption& n : number_options) {
        const std::string option = std::string("--") + n.name;
        for (const Case& c : cases) {
            const Parsed spaced(with_acquire({option, c.text}));
            const Parsed joined(with_acquire({option + "=" + c.text}));
            if (accepted(spaced)) CHECK_EQ(number_of(spaced.o, n.name), c.ms);
            if (accepted(joined)) CHECK_EQ(number_of(joined.o, n.name), c.ms);
        }
        // Past 2147483647 ms in any unit, and zero where the option needs more.
        for (const char* v : {"2147483648ms", "2147484s", "35792m", "597h", "4294968s",
                              "99999999999h", "18446744073709551617ms"}) {
            refused(Parsed(with_acquire({option, v})),
                    option + ": expected a whole number of milliseconds in " + n.lo + ".." +
                        max_text + ", or of ms, s, m or h (1500ms, 30s, 5m, 2h), got '" + v + "'");
        }
    }
    for (const char* zero : {"0s", "0m", "0h", "0ms"}) {
        const Parsed wait(with_acquire({"--wait", zero}));
        if (accepted(wait)) CHECK_EQ(wait.o.wait_ms, 0U);
        refused(Parsed(with_acquire({"--timeout", zero})), "--timeout: expected");
        refused(Parsed(with_acquire({"--once-per", zero})), "--once-per: expected");
        refused(Parsed(with_acquire({"--ttl", zero})), "--ttl: expected at least 3 ms");
    }
    refused(Parsed(with_acquire({"--ttl", "2ms"})), "--ttl: expected at least 3 ms, got '2ms'");
    const Parsed three(with_acquire({"--ttl", "3ms"}));
    if (accepted(three)) CHECK_EQ(three.o.ttl_ms, 3U);
}

TEST(ttl_too_short_to_leave_any_validity_is_refused) {
    // Validity is TTL - TTL/100 - 2 ms: none at 2 ms, 1 ms at 3 ms. Every command takes --ttl.
    for (const char* v : {"0", "1", "2", "00002"}) {
        const std::string text = std::string("--ttl: expected at least 3 ms, got '") + v +
                                 "': a lock is valid for TTL - TTL/100 - 2 ms, so a shorter TTL "
                                 "would leave no validity at all";
        refused(Parsed({"--ttl", v, "acquire", "k"}), text);
        refused(Parsed({"--ttl=" + std::string(v), "run", "k", "--", "true"}), text);
        refused(Parsed({"extend", "k", "t", "--ttl", v}), text);
        refused(Parsed({"--limit", "2", "--ttl", v, "acquire", "k"}), text);
        refused(Parsed({"--fair", "--ttl", v, "acquire", "k"}), text);
    }
    for (const std::vector<std::string>& line :
         std::vector<std::vector<std::string>>{{"--ttl", "3", "acquire", "k"},
                                               {"--ttl", "3", "run", "k", "--", "true"},
                                               {"--ttl", "3", "extend", "k", "t"}}) {
        const Parsed p(line);
        if (accepted(p)) CHECK_EQ(p.o.ttl_ms, 3U);
    }
}

TEST(wait_zero_is_one_attempt_not_an_error) {
    const Parsed p(with_acquire({"--wait", "0"}));
    if (accepted(p)) CHECK_EQ(p.o.wait_ms, 0U);
}

TEST(a_value_is_the_next_argument_even_with_a_dash) {
    refused(Parsed({"--ttl", "--wait", "5", "acquire", "k"}), "got '--wait'");
    const Parsed url({"--url", "-x", "status", "k"});
    if (accepted(url)) CHECK_TEXT(url.o.urls[0], "-x");  // refused later, as a URL
    const Parsed file({"--password-file", "-", "status", "k"});
    if (accepted(file)) CHECK_TEXT(file.o.password_file, "-");
}

TEST(option_values_are_echoed_masked_and_cut) {
    const Parsed p({"--ttl", "redis://default:Hunter2Pw@h", "status", "k"});
    refused(p, "got 'redis://default:***@h'");
    CHECK(!contains(p.err, "Hunter2Pw"));
    const Parsed bare({"--wait=redis://default:Hunter2Pw", "acquire", "k"});
    refused(bare, "got 'redis://***'");
    CHECK(!contains(bare.err, "Hunter2Pw"));
    const Parsed longer({"--timeout", std::string(100, '9') + "x", "status", "k"});
    refused(longer, "got '" + std::string(40, '9') + "'");
}

// ---------------------------------------------------------------------------------------------
// Flags

TEST(flags_are_set) {
    const Parsed p({"--fence", "--wake", "--insecure-skip-tls-verify", "acquire", "k"});
    REQUIRE(accepted(p));
    CHECK(p.o.fence);
    CHECK(p.o.wake);
    CHECK(p.o.insecure);
    const Parsed after({"acquire", "k", "--fence"});
    if (accepted(after)) CHECK(after.o.fence);
}

TEST(flags_refuse_values) {
    for (const char* flag :
         {"fence", "wake", "insecure-skip-tls-verify", "help", "version", "nonblock"}) {
        for (const char* value : {"1", "yes", ""}) {
            refused(Parsed({std::string("--") + flag + "=" + value, "acquire", "k"}),
                    std::string("--") + flag + " takes no value");
        }
    }
}

TEST(flag_followed_by_a_word_takes_it_as_an_operand) {
    // A flag never takes the next argument: here it is KEY.
    const Parsed p({"acquire", "--fence", "k"});
    REQUIRE(accepted(p));
    CHECK(p.o.fence);
    CHECK_TEXT(p.o.operands[0], "k");
}

// ---------------------------------------------------------------------------------------------
// --help and --version

TEST(help_and_version) {
    for (const std::vector<std::string>& args :
         std::vector<std::vector<std::string>>{{"--help"},
                                               {"-h"},
                                               {"help"},
                                               {"--help", "--bogus"},
                                               {"-h", "frob"},
                                               {"-h", "status"}}) {
        const Parsed p(args);
        const bool ok = CHECK_EQ(p.code, resplock_cli::exit_ok) && CHECK(p.err.empty()) &&
                        CHECK(p.out.rfind("Usage: resplock [OPTIONS] COMMAND ...\n", 0) == 0) &&
                        CHECK(contains(p.out, "Exit status:"));
        if (!ok) p.show();
    }
    const Parsed v({"--version"});
    CHECK_EQ(v.code, resplock_cli::exit_ok);
    // The build's TLS and linking (the CMake build is never linked -static: scripts/static.sh).
#ifdef RESPLOCK_CLI_TLS
    const std::string_view tls = "TLS: mbedTLS " MBEDTLS_VERSION_STRING "\n";
#else
    const std::string_view tls = "TLS: none (rediss:// URLs are refused)\n";
#endif
    CHECK_EQ(std::string_view(v.out),
             "resplock " RESPLOCK_VERSION "\n" + std::string(tls) + "linked: dynamic\n");
    CHECK(v.err.empty());
}

TEST(help_text_names_every_option_and_exit_code) {
    const Parsed p({"--help"});
    for (const char* word : {"--url URL",
                             "redis-sentinel://",
                             "rediss-sentinel://",
                             "#MASTERNAME",
                             "-u,",
                             "--password-file PATH",
                             "--ttl MS",
                             "--wait MS",
                             "--timeout MS",
                             "--fence",
                             "--once-per MS",
                             "--wake",
                             "--limit N",
                             "--cacert FILE",
                             "--cert FILE",
                             "--key FILE",
                             "--tls-server-name NAME",
                             "--insecure-skip-tls-verify",
                             "-h, --help",
                             "--version",
                             "acquire KEY",
                             "release KEY TOKEN",
                             "extend KEY TOKEN",
                             "status KEY",
                             "run KEY -- COMMAND",
                             "list [PATTERN]",
                             "--json",
                             "--verbose",
                             "--max N",
                             "    0  ",
                             "    1  ",
                             "   64  ",
                             "   69  ",
                             "   70  ",
                             "   74  ",
                             "   75  ",
                             "   76  ",
                             "   77  ",
                             "  126  ",
                             "  127  ",
                             "resplock --limit 10 --wait 3600000 run fleet:ota -- ./update.sh"}) {
        if (!CHECK(contains(p.out, word))) std::printf("      missing: %s\n", word);
    }
#ifdef RESPLOCK_CLI_TLS
    CHECK(!contains(p.out, "this build has no TLS support"));
#else
    CHECK(contains(p.out, "this build has no TLS support"));
#endif
}

TEST(help_text_names_the_companion_keys_as_they_are) {
    // A KEY without a hash tag keeps its companions under {KEY} (resplock/core/companion.hpp).
    const Parsed p({"--help"});
    for (const char* name : {"{KEY}:fence", "{KEY}:once", "{KEY}:wake"}) {
        if (!CHECK(contains(p.out, name))) std::printf("      missing: %s\n", name);
    }
    for (const char* name : {" KEY:fence", " KEY:once", " KEY:wake", "(KEY:"}) {
        if (!CHECK(!contains(p.out, name))) std::printf("      present: %s\n", name);
    }
}

TEST(an_error_before_help_wins) {
    refused(Parsed({"--bogus", "--help"}), "unknown option '--bogus'");
    refused(Parsed({"--ttl", "0", "--version"}), "--ttl: expected");
}

// ---------------------------------------------------------------------------------------------
// Unknown options and missing values

TEST(unknown_options) {
    for (const char* arg : {"--bogus", "-x", "-U", "--URL=redis://h", "--u", "--h", "-help", "-hx",
                            "--ttl-ms=5", "--Ttl=5", "--urll", "---url", "--=5", "--help-me"}) {
        refused(Parsed({arg, "status", "k"}), std::string("unknown option '") + arg + "'");
    }
    // After the command and KEY too.
    refused(Parsed({"status", "k", "--bogus"}), "unknown option '--bogus'");
}

TEST(unknown_option_echo_is_masked_and_cut) {
    const std::string u = "redis://:Hunter2Pw@127.0.0.1:6379";
    for (const std::string& arg : {"--URL=" + u, "--urll=" + u, "-x" + u, "--" + u, "-U" + u}) {
        const Parsed p({arg, "status", "k"});
        refused(p, "unknown option '");
        if (!CHECK(!contains(p.err, "Hunter2Pw"))) p.show();
    }
    refused(Parsed({"--urll=redis://:Hunter2Pw@h", "status", "k"}),
            "unknown option '--urll=redis://:***@h'");
    refused(Parsed({"--" + std::string(60, 'x'), "status", "k"}),
            "unknown option '--" + std::string(38, 'x') + "' (try");
}

TEST(missing_values) {
    for (const char* option :
         {"--url", "--password-file", "--ttl", "--wait", "--timeout", "--once-per", "--cacert",
          "--cert", "--key", "--tls-server-name", "-u", "-w", "--wait-seconds", "-E",
          "--conflict-exit-code", "-c", "--command"}) {
        refused(Parsed({"acquire", "k", option}),
                std::string("option ") + option + " needs a value");
    }
}

// ---------------------------------------------------------------------------------------------
// The command and its operands

TEST(commands_and_their_operands) {
    struct Case {
        std::vector<std::string> args;
        Command command;
        int operands;
    };
    const std::vector<Case> cases = {
        {{"acquire", "k"}, Command::acquire, 1},       {{"release", "k", "t"}, Command::release, 2},
        {{"extend", "k", "t"}, Command::extend, 2},    {{"status", "k"}, Command::status, 1},
        {{"run", "k", "--", "true"}, Command::run, 1},
    };
    for (const Case& c : cases) {
        const Parsed p(c.args);
        if (!accepted(p)) continue;
        CHECK(p.o.command == c.command);
        CHECK_EQ(std::string_view(p.o.command_name), std::string_view(c.args[0]));
        CHECK_EQ(p.o.operand_count, c.operands);
        CHECK_TEXT(p.o.operands[0], "k");
        if (c.operands == 2) CHECK_TEXT(p.o.operands[1], "t");
    }
}

TEST(missing_command_or_operand) {
    refused(Parsed({}), "missing command: acquire, release, extend, status, run or list");
    refused(Parsed({"--ttl", "5"}), "missing command");
    refused(Parsed({"--"}), "missing command");
    refused(Parsed({"acquire"}), "acquire: missing KEY");
    refused(Parsed({"status"}), "status: missing KEY");
    refused(Parsed({"run"}), "run: missing KEY");
    refused(Parsed({"release"}), "release: missing KEY");
    refused(Parsed({"release", "k"}), "release: missing TOKEN");
    refused(Parsed({"extend", "k"}), "extend: missing TOKEN");
}

TEST(unknown_commands) {
    for (const char* command : {"frobnicate", "ACQUIRE", "Status", "lock", "unlock", "acquire "}) {
        refused(Parsed({command, "k"}), std::string("unknown command '") + command + "'");
    }
    const Parsed p({"redis://default:Hunter2Pw", "status", "k"});
    refused(p, "unknown command 'redis://***'");
    CHECK(!contains(p.err, "Hunter2Pw"));
}

TEST(too_many_arguments) {
    refused(Parsed({"status", "k", "extra"}), "status: too many arguments");
    refused(Parsed({"acquire", "a", "b"}), "acquire: too many arguments");
    refused(Parsed({"release", "k", "t", "extra"}), "release: too many arguments");
    refused(Parsed({"extend", "k", "t", "x", "y"}), "extend: too many arguments");
    // An extra argument that holds a password is not echoed.
    const Parsed p({"status", "k", "redis://default:Hunter2Pw"});
    refused(p, "status: too many arguments");
    CHECK(!contains(p.err, "Hunter2Pw"));
}

TEST(key_length) {
    const std::string max_key(RESPLOCK_MAX_KEY_LEN, 'k');
    for (const std::string& key : {std::string("k"), max_key}) {
        const Parsed p({"acquire", key});
        if (accepted(p)) CHECK_EQ(std::string_view(p.o.operands[0]), std::string_view(key));
    }
    refused(Parsed({"acquire", ""}), "acquire: KEY must not be empty");
    refused(Parsed({"run", "", "--", "true"}), "run: KEY must not be empty");
    refused(Parsed({"status", max_key + "k"}),
            "status: KEY is 129 bytes long; at most 128 are accepted");
    refused(Parsed({"release", std::string(1000, 'k'), "t"}), "KEY is 1000 bytes long");
}

TEST(key_bytes_are_kept) {
    for (const std::string& key :
         {std::string("in puts:\r\n\xff end"), std::string("-"), std::string("--"),
          std::string("k=v"), std::string("user@host"), std::string(" ")}) {
        const Parsed p({"acquire", "--", key});
        if (!accepted(p)) continue;
        CHECK_EQ(std::string_view(p.o.operands[0]), std::string_view(key));
        // Messages show it as is (report() turns control characters into '?').
        CHECK_EQ(std::string_view(p.o.key_shown.text), std::string_view(key));
    }
}

TEST(key_that_may_hold_a_password_is_masked_in_messages) {
    const Parsed p({"acquire", "redis://default:Hunter2Pw@busy"});
    REQUIRE(accepted(p));
    CHECK_TEXT(p.o.operands[0], "redis://default:Hunter2Pw@busy");  // used as is
    CHECK_TEXT(p.o.key_shown.text, "redis://default:***@busy");
    const Parsed bare(
        {"release", "redis://default:Hunter2Pw", std::string(resplock::max_token_len + 1, 't')});
    refused(bare, "release redis://***: TOKEN must be 1..73 characters");
    CHECK(!contains(bare.err, "Hunter2Pw"));
}

TEST(token_length) {
    // A token with an owner label is up to max_token_len (73) characters.
    const std::size_t longest = resplock::max_token_len;
    for (const char* command : {"release", "extend"}) {
        for (const std::string& token : {std::string("t"), std::string(longest, 't')}) {
            const Parsed p({command, "k", token});
            if (accepted(p)) CHECK_EQ(std::string_view(p.o.operands[1]), std::string_view(token));
        }
        for (const std::string& token : {std::string(), std::string(longest + 1, 't')}) {
            refused(Parsed({command, "k", token}),
                    std::string(command) + " k: TOKEN must be 1.." + std::to_string(longest) +
                        " characters (as printed by 'resplock acquire')");
        }
    }
}

// ---------------------------------------------------------------------------------------------
// --owner and --no-client-name

TEST(owner_label_is_checked_and_kept) {
    const Parsed p({"--owner", "door-17.a_B", "acquire", "k"});
    if (accepted(p)) {
        CHECK_TEXT(p.o.owner, "door-17.a_B");
        CHECK(p.o.owner_given);
        CHECK(p.o.client_name);
    }
    const Parsed empty({"--owner=", "run", "k", "--", "true"});
    if (accepted(empty)) {
        CHECK_TEXT(empty.o.owner, "");
        CHECK(empty.o.owner_given);
    }
    const std::string longest(RESPLOCK_MAX_OWNER_LEN, 'o');
    const Parsed l({"--owner", longest, "acquire", "k"});
    if (accepted(l)) CHECK_TEXT(l.o.owner, longest);
    for (const std::string& bad :
         {std::string("two words"), std::string("a:b"), std::string("new\nline"),
          std::string("caf\xc3\xa9"), std::string(RESPLOCK_MAX_OWNER_LEN + 1, 'o')}) {
        refused(Parsed({"--owner", bad, "acquire", "k"}),
                "--owner: expected at most " + std::to_string(RESPLOCK_MAX_OWNER_LEN) +
                    " characters of A-Z a-z 0-9 . _ -, got '");
    }
    refused(Parsed({"acquire", "k", "--owner"}), "option --owner needs a value");
}

TEST(no_client_name_is_a_flag) {
    const Parsed p({"--no-client-name", "status", "k"});
    if (accepted(p)) CHECK(!p.o.client_name);
    refused(Parsed({"--no-client-name=1", "status", "k"}), "--no-client-name takes no value");
}

TEST(default_owner_is_the_host_name_made_safe_and_cut) {
    resplock_cli::Options o;
    resplock_cli::default_owner(o, "edge-7.plant.example");
    CHECK_TEXT(o.owner, "edge-7.plant.example");
    resplock_cli::Options odd;
    resplock_cli::default_owner(odd, "my host:1/\xc3\xa9");
    CHECK_TEXT(odd.owner, "my-host-1---");
    resplock_cli::Options long_name;
    const std::string name(RESPLOCK_MAX_OWNER_LEN + 10, 'h');
    resplock_cli::default_owner(long_name, name.c_str());
    CHECK_TEXT(long_name.owner, std::string(RESPLOCK_MAX_OWNER_LEN, 'h'));
    resplock_cli::Options none;
    resplock_cli::default_owner(none, nullptr);
    CHECK_TEXT(none.owner, "");
    // --owner wins, even when empty.
    const Parsed given({"--owner=", "acquire", "k"});
    resplock_cli::Options copy = given.o;
    resplock_cli::default_owner(copy, "host");
    CHECK_TEXT(copy.owner, "");
}

// ---------------------------------------------------------------------------------------------
// "--"

TEST(double_dash_ends_the_options) {
    const Parsed dash({"acquire", "--", "-dash"});
    if (accepted(dash)) CHECK_TEXT(dash.o.operands[0], "-dash");
    const Parsed first({"--", "acquire", "k"});
    if (accepted(first)) CHECK(first.o.command == Command::acquire);
    const Parsed token({"release", "--", "k", "--"});
    if (accepted(token)) CHECK_TEXT(token.o.operands[1], "--");
    const Parsed options({"--ttl", "5000", "--", "acquire", "k"});
    if (accepted(options)) CHECK_EQ(options.o.ttl_ms, 5000U);
    // After it, what looks like an option is an operand.
    refused(Parsed({"acquire", "--", "k", "--ttl"}), "acquire: too many arguments");
    refused(Parsed({"status", "k", "--", "extra"}), "status: too many arguments");
    refused(Parsed({"--", "--help"}), "unknown command '--help'");
}

TEST(run_command_forms) {
    struct Case {
        std::vector<std::string> args;
        std::vector<std::string> command;
        std::uint32_t ttl_ms;
    };
    const std::vector<Case> cases = {
        {{"run", "k", "--", "true"}, {"true"}, 30000},
        {{"run", "k", "true", "a", "b"}, {"true", "a", "b"}, 30000},
        // The "--" right after KEY is always the separator, even when another follows.
        {{"run", "k", "--", "--"}, {"--"}, 30000},
        {{"run", "k", "--", "--", "x"}, {"--", "x"}, 30000},
        // After a first "--", KEY, then the separator.
        {{"run", "--", "k", "--", "true"}, {"true"}, 30000},
        {{"run", "--", "k", "true"}, {"true"}, 30000},
        {{"run", "--", "k", "--", "--", "x"}, {"--", "x"}, 30000},
        {{"--", "run", "k", "--", "true"}, {"true"}, 30000},
        // Options before the separator are resplock's; from COMMAND on, COMMAND's.
        {{"run", "k", "--ttl", "5000", "--", "true"}, {"true"}, 5000},
        {{"run", "--ttl=5000", "k", "--", "true"}, {"true"}, 5000},
        {{"run", "k", "sh", "--ttl", "5"}, {"sh", "--ttl", "5"}, 30000},
        {{"run", "k", "--", "-u", "x"}, {"-u", "x"}, 30000},
        {{"run", "k", "-", "x"}, {"-", "x"}, 30000},
        {{"-u", "redis://h", "run", "k", "--", "env", "--", "x"}, {"env", "--", "x"}, 30000},
    };
    for (const Case& c : cases) {
        const Parsed p(c.args);
        if (!accepted(p)) continue;
        const bool ok = CHECK(p.o.command == Command::run) && CHECK_TEXT(p.o.operands[0], "k") &&
                        CHECK(p.command() == c.command) && CHECK_EQ(p.o.ttl_ms, c.ttl_ms);
        if (!ok) {
            p.show();
            for (const std::string& w : p.command())
                std::printf("      COMMAND word: '%s'\n", w.c_str());
        }
    }
}

TEST(run_without_command_is_refused) {
    for (const std::vector<std::string>& args : std::vector<std::vector<std::string>>{
             {"run", "k"}, {"run", "k", "--"}, {"run", "--", "k"}, {"run", "--", "k", "--"}}) {
        refused(Parsed(args),
                "run: missing COMMAND after KEY (resplock run KEY -- COMMAND [ARGS...], or "
                "resplock run KEY -c CMD)");
    }
    refused(Parsed({"run", "k", "-x", "--", "true"}), "unknown option '-x'");
}

// ---------------------------------------------------------------------------------------------
// --limit N: the semaphore

TEST(limit_is_read_in_both_forms_for_every_command) {
    for (const std::vector<std::string>& line :
         std::vector<std::vector<std::string>>{{"acquire", "k"},
                                               {"release", "k", "t"},
                                               {"extend", "k", "t"},
                                               {"status", "k"},
                                               {"run", "k", "--", "true"}}) {
        std::vector<std::string> spaced = {"--limit", "3"};
        spaced.insert(spaced.end(), line.begin(), line.end());
        const Parsed a(spaced);
        if (accepted(a)) CHECK_EQ(a.o.limit, 3U);
        std::vector<std::string> joined = line;
        joined.insert(line[0] == "run" ? joined.begin() + 2 : joined.end(), "--limit=12");
        const Parsed b(joined);
        if (accepted(b)) CHECK_EQ(b.o.limit, 12U);
    }
    const Parsed none({"status", "k"});
    if (accepted(none)) CHECK_EQ(none.o.limit, 0U);
}

TEST(limit_at_its_bounds_is_accepted) {
    for (const char* v : {"1", "65535", "00010"}) {
        const Parsed p({"--limit", v, "acquire", "k"});
        if (accepted(p)) CHECK_EQ(std::to_string(p.o.limit), std::to_string(std::stoul(v)));
    }
}

TEST(limit_zero_too_large_or_junk_is_refused) {
    for (const char* v :
         {"0", "65536", "4294967296", "-1", "+3", "3x", "abc", "", " 3", "1e3", "2.5"}) {
        const std::string text =
            std::string("--limit: expected a whole number of holders in 1..65535, got '") + v + "'";
        refused(Parsed({"--limit", v, "acquire", "k"}), text);
        refused(Parsed({std::string("--limit=") + v, "acquire", "k"}), text);
    }
    refused(Parsed({"acquire", "k", "--limit"}), "option --limit needs a value");
}

TEST(limit_given_twice_is_refused) {
    for (const char* second : {"3", "5"}) {
        refused(Parsed({"--limit", "3", "acquire", "k", "--limit", second}), "--limit given twice");
    }
    refused(Parsed({"--limit=3", "--limit=3", "status", "k"}), "--limit given twice");
}

TEST(n_is_nonblock_not_a_short_limit) {
    // -n is flock's --nonblock: the "3" is then taken for the command.
    refused(Parsed({"-n", "3", "acquire", "k"}), "unknown command '3'");
    refused(Parsed({"-n3", "acquire", "k"}), "unknown option '-n3'");
}

TEST(limit_refuses_what_a_semaphore_does_not_do) {
    refused(Parsed({"--limit", "3", "--once-per", "1000", "acquire", "k"}),
            "--limit does not take --once-per");
    refused(Parsed({"--limit", "3", "--wake", "acquire", "k"}), "--limit does not take --wake");
    refused(Parsed({"--limit", "3", "--wake", "release", "k", "t"}),
            "--limit does not take --wake");
    refused(
        Parsed({"--limit", "3", "-u", "redis://a", "-u", "redis://b", "run", "k", "--", "true"}),
        "--limit works with one server only, not with a quorum of 2 (several URLs in --url)");
    refused(Parsed({"--limit", "3", "-u", "redis://a,redis://b,redis://c", "status", "k"}),
            "not with a quorum of 3 (several URLs in --url)");
    refused(Parsed({"--limit", "3", "acquire", "k"}, "redis://a,redis://b"),
            "not with a quorum of 2 (several URLs in REDIS_URL)");
    // One URL of any kind is one server.
    accepted(Parsed({"--limit", "3", "-u", "redis-sentinel://s1,s2#m", "acquire", "k"}));
}

TEST(limit_takes_replicas_even_with_fair) {
    const Parsed p({"--limit", "3", "--replicas", "2", "acquire", "k"});
    if (accepted(p)) CHECK_EQ(p.o.replicas, 2U);
    const Parsed fair({"--limit", "3", "--fair", "--replicas", "1", "run", "k", "--", "true"});
    if (accepted(fair)) CHECK(fair.o.fair && fair.o.replicas == 1U);
    accepted(Parsed({"--limit", "3", "--replicas", "1", "extend", "k", "t"}));
    // So does the fair lock (every grant, handed over too, passes the check); --replicas still
    // fits acquire, run and extend only.
    const Parsed fair_lock({"--fair", "--replicas", "1", "acquire", "k"});
    if (accepted(fair_lock)) CHECK(fair_lock.o.fair && fair_lock.o.replicas == 1U);
    refused(Parsed({"--limit", "3", "--replicas", "1", "status", "k"}),
            "--replicas applies to run, acquire and extend only");
}

TEST(limit_with_fair_takes_fence_and_owner) {
    const Parsed p({"--limit", "2", "--fair", "--fence", "--owner", "gw-1", "acquire", "k"});
    if (accepted(p)) {
        CHECK(p.o.fair && p.o.fence && p.o.owner_given);
        CHECK_EQ(p.o.limit, 2U);
        CHECK_TEXT(p.o.owner, "gw-1");
    }
    accepted(Parsed({"--limit", "2", "--fair", "--fence", "run", "k", "--", "true"}));
    // So does the fair lock; it refuses the plain lock's once-per marker and wake list.
    const Parsed fair_lock({"--fair", "--fence", "--owner", "gw-1", "acquire", "k"});
    if (accepted(fair_lock)) CHECK(fair_lock.o.fence && fair_lock.o.owner_given);
    refused(Parsed({"--fair", "--wake", "acquire", "k"}), "--fair takes neither");
    refused(Parsed({"--fair", "--once-per", "1s", "acquire", "k"}), "--fair takes neither");
    // --fence stays an acquire/run option.
    refused(Parsed({"--limit", "2", "--fence", "status", "k"}),
            "--fence applies to run and acquire only");
}

// ---------------------------------------------------------------------------------------------
// complete_options(): REDIS_URL, the default, and options that fit some commands only

TEST(redis_url_is_used_without_url) {
    {
        const Parsed p({"status", "k"}, "redis://:pw@h:1/2");
        REQUIRE(accepted(p));
        REQUIRE_EQ(p.o.url_count, 1);
        CHECK_TEXT(p.o.urls[0], "redis://:pw@h:1/2");
        CHECK_TEXT(p.o.url_source, "REDIS_URL");
    }
    {
        const Parsed p({"status", "k"}, "redis://:p,w@a,rediss://b");
        REQUIRE(accepted(p));
        REQUIRE_EQ(p.o.url_count, 2);
        CHECK_TEXT(p.o.urls[0], "redis://:p,w@a");
        CHECK_TEXT(p.o.urls[1], "rediss://b");
    }
    for (const char* unset : {static_cast<const char*>(nullptr), ""}) {
        const Parsed p({"status", "k"}, unset);
        REQUIRE(accepted(p));
        CHECK_EQ(p.o.url_count, 1);
        CHECK_TEXT(p.o.urls[0], resplock_cli::default_url);
        CHECK_TEXT(p.o.url_source, "--url");
    }
    // --url wins, whatever REDIS_URL holds.
    const Parsed p({"-u", "redis://mine", "status", "k"}, "not a URL at all");
    REQUIRE(accepted(p));
    CHECK_EQ(p.o.url_count, 1);
    CHECK_TEXT(p.o.urls[0], "redis://mine");
    refused(Parsed({"status", "k"}, "redis://1,redis://2,redis://3,redis://4,redis://5,redis://6"),
            "too many servers");
}

TEST(once_per_and_fence_apply_to_acquire_and_run_only) {
    accepted(Parsed({"--once-per", "1000", "--fence", "acquire", "k"}));
    accepted(Parsed({"--once-per", "1000", "--fence", "run", "k", "--", "true"}));
    for (const std::vector<std::string>& line : std::vector<std::vector<std::string>>{
             {"status", "k"}, {"release", "k", "t"}, {"extend", "k", "t"}}) {
        std::vector<std::string> once = {"--once-per", "1000"};
        once.insert(once.end(), line.begin(), line.end());
        refused(Parsed(once), "--once-per applies to run and acquire only");
        std::vector<std::string> fence = {"--fence"};
        fence.insert(fence.end(), line.begin(), line.end());
        refused(Parsed(fence), "--fence applies to run and acquire only");
    }
    // --wake and the TLS options fit every command at this stage.
    accepted(Parsed({"--wake", "release", "k", "t"}));
    accepted(Parsed({"--cacert", "ca.pem", "status", "k"}));
}

TEST(first_error_wins) {
    refused(Parsed({"--ttl", "0", "frobnicate"}), "--ttl: expected");
    refused(Parsed({"frobnicate", "--ttl", "0"}), "unknown command 'frobnicate'");
    refused(Parsed({"status", "k", "--bogus", "--ttl"}), "unknown option '--bogus'");
    // Option errors come before the checks of the operands...
    refused(Parsed({"acquire", "--ttl", "x"}), "--ttl: expected");
    // ...which come before the options that fit some commands only.
    refused(Parsed({"--fence", "status"}), "status: missing KEY");
}

// ---------------------------------------------------------------------------------------------
// Inspection: list [PATTERN], --json, --verbose, --max

TEST(list_and_inspection_options_are_read) {
    const Parsed bare({"list"});
    if (accepted(bare)) {
        CHECK(bare.o.command == resplock_cli::Command::list);
        CHECK_EQ(bare.o.operand_count, 0);
        CHECK_EQ(bare.o.max, 1000U);
    }
    const Parsed p({"list", "jobs:*", "--json", "--max=7"});
    if (accepted(p)) {
        CHECK_EQ(std::string(p.o.operands[0]), std::string("jobs:*"));
        CHECK(p.o.json);
        CHECK_EQ(p.o.max, 7U);
    }
    const Parsed v({"--verbose", "status", "k"});
    if (accepted(v)) CHECK(v.o.verbose);
    const Parsed j({"status", "--json", "--limit", "3", "k"});
    if (accepted(j)) CHECK(j.o.json && j.o.limit == 3U);
}

TEST(list_and_inspection_misuse_is_refused) {
    refused(Parsed({"list", "a", "b"}), "list: too many arguments");
    refused(Parsed({"list", "--verbose"}), "--verbose applies to status only");
    refused(Parsed({"acquire", "k", "--json"}), "--json applies to status and list only");
    refused(Parsed({"status", "k", "--max", "5"}), "--max applies to list only");
    refused(Parsed({"status", "k", "--max", "1000"}), "--max applies to list only");
    refused(Parsed({"status", "k", "--json", "--verbose"}), "--json and --verbose do not go");
    refused(Parsed({"list", "--max", "0"}), "--max: expected a whole number of locks");
    refused(Parsed({"list", "--limit", "2"}), "list takes none of --limit");
    refused(Parsed({"-u", "redis://a,redis://b,redis://c", "list"}), "not with a quorum of 3");
    refused(Parsed({"-u", "redis://a,redis://b,redis://c", "status", "--json", "k"}),
            "not with a quorum of 3");
}

// ---------------------------------------------------------------------------------------------
// flock(1)'s options: -n, -w SECONDS, -E CODE, run -c CMD

namespace {

const char seconds_refusal[] =
    "-w/--wait-seconds: expected a number of seconds in 0..2147483.647 with at most 3 decimals "
    "(5, 2.5, 0.001), got '";

}  // namespace

TEST(nonblock_is_a_single_attempt_in_every_form) {
    for (const std::vector<std::string>& args :
         std::vector<std::vector<std::string>>{{"-n", "acquire", "k"},
                                               {"--nonblock", "acquire", "k"},
                                               {"acquire", "k", "-n"},
                                               {"run", "k", "-n", "--", "true"},
                                               {"-n", "-n", "acquire", "k"}}) {
        const Parsed p(args);
        if (!accepted(p)) continue;
        CHECK_EQ(p.o.wait_ms, 0U);
        CHECK_TEXT(p.o.wait_option, "-n/--nonblock");
    }
}

TEST(nonblock_wait_and_wait_seconds_exclude_each_other) {
    struct Case {
        std::vector<std::string> args;
        const char* text;
    };
    const std::vector<Case> cases = {
        {{"-n", "--wait", "5", "acquire", "k"}, "-n/--nonblock and --wait"},
        {{"--wait=5", "-n", "acquire", "k"}, "--wait and -n/--nonblock"},
        {{"--wait", "0", "--nonblock", "acquire", "k"}, "--wait and -n/--nonblock"},
        {{"-n", "-w", "1", "acquire", "k"}, "-n/--nonblock and -w/--wait-seconds"},
        {{"-w1", "--nonblock", "run", "k", "--", "true"}, "-w/--wait-seconds and -n/--nonblock"},
        {{"--wait", "5", "-w", "1", "acquire", "k"}, "--wait and -w/--wait-seconds"},
        {{"--wait-seconds=1", "--wait=5", "acquire", "k"}, "-w/--wait-seconds and --wait"},
        {{"acquire", "k", "-w", "1", "--wait", "1000"}, "-w/--wait-seconds and --wait"},
    };
    for (const Case& c : cases)
        refused(Parsed(c.args), std::string(c.text) + " cannot be combined: both set how long");
    // The same option again: its last value, as for every value option.
    const Parsed twice({"-w", "1", "-w", "2.5", "acquire", "k"});
    if (accepted(twice)) CHECK_EQ(twice.o.wait_ms, 2500U);
    const Parsed waits({"--wait", "1", "--wait", "7", "acquire", "k"});
    if (accepted(waits)) CHECK_EQ(waits.o.wait_ms, 7U);
}

TEST(wait_seconds_in_every_form) {
    for (const std::vector<std::string>& args :
         std::vector<std::vector<std::string>>{{"-w", "2.5", "acquire", "k"},
                                               {"-w2.5", "acquire", "k"},
                                               {"--wait-seconds", "2.5", "acquire", "k"},
                                               {"--wait-seconds=2.5", "acquire", "k"},
                                               {"acquire", "k", "-w", "2.5"},
                                               {"run", "k", "-w2.5", "--", "true"}}) {
        const Parsed p(args);
        if (!accepted(p)) continue;
        CHECK_EQ(p.o.wait_ms, 2500U);
        CHECK_TEXT(p.o.wait_option, "-w/--wait-seconds");
    }
}

TEST(wait_seconds_take_fractions_to_the_millisecond) {
    struct Case {
        const char* text;
        std::uint32_t ms;
    };
    const Case cases[] = {
        {"0", 0},
        {"0.0", 0},
        {"5", 5000},
        {"2.5", 2500},
        {"0.5", 500},
        {".5", 500},
        {"5.", 5000},
        {"0.001", 1},
        {"0.01", 10},
        {"1.234", 1234},
        {"007.5", 7500},
        // More than 3 decimals: only zeros, which say no more than 3 would.
        {"0.0010", 1},
        {"1.500000", 1500},
        {"2147483.647", 2147483647U},
        {"2147483", 2147483000U},
    };
    for (const Case& c : cases) {
        const Parsed p({"-w", c.text, "acquire", "k"});
        if (accepted(p) && !CHECK_EQ(p.o.wait_ms, c.ms)) p.show();
    }
}

TEST(wait_seconds_refuse_signs_blanks_junk_sub_milliseconds_and_overflow) {
    for (const char* v : {"-1",
                          "-0",
                          "+1",
                          " 1",
                          "1 ",
                          "",
                          ".",
                          "..5",
                          "1.2.3",
                          "1e3",
                          "1E3",
                          "5s",
                          "5ms",
                          "0x1",
                          "1,5",
                          "abc",
                          "inf",
                          "nan",
                          "0.0015",
                          "0.0001",
                          "1.2345",
                          "2147483.648",
                          "2147484",
                          "2147483647",
                          "4294967.296",
                          "99999999999999999999",
                          "18446744073709551.616"}) {
        refused(Parsed({"-w", v, "acquire", "k"}), std::string(seconds_refusal) + v + "'");
        refused(Parsed({std::string("--wait-seconds=") + v, "acquire", "k"}),
                std::string(seconds_refusal) + v + "'");
    }
}

TEST(conflict_exit_code_in_every_form) {
    for (const std::vector<std::string>& args :
         std::vector<std::vector<std::string>>{{"-E", "3", "acquire", "k"},
                                               {"-E3", "acquire", "k"},
                                               {"--conflict-exit-code", "3", "acquire", "k"},
                                               {"--conflict-exit-code=3", "acquire", "k"},
                                               {"run", "k", "-E", "3", "--", "true"},
                                               {"--limit", "2", "-E3", "acquire", "k"},
                                               {"--fair", "-E", "3", "run", "k", "-c", "true"}}) {
        const Parsed p(args);
        if (!accepted(p)) continue;
        CHECK_EQ(p.o.busy_exit, 3);
        CHECK(p.o.busy_exit_given);
    }
    const Parsed none({"acquire", "k"});
    if (accepted(none)) CHECK_EQ(none.o.busy_exit, 75);
    for (const char* v : {"0", "255", "075"}) {
        const Parsed p({"-E", v, "acquire", "k"});
        if (accepted(p)) CHECK_EQ(p.o.busy_exit, std::stoi(v));
    }
}

TEST(conflict_exit_code_refuses_junk_and_other_commands) {
    for (const char* v :
         {"256", "1000", "-1", "+3", "", " 3", "3 ", "3.0", "1e2", "x", "0x3", "4294967299"}) {
        const std::string text =
            std::string(
                "-E/--conflict-exit-code: expected an exit status, a whole number in 0..255, "
                "got '") +
            v + "'";
        refused(Parsed({"-E", v, "acquire", "k"}), text);
        refused(Parsed({std::string("--conflict-exit-code=") + v, "acquire", "k"}), text);
    }
    for (const std::vector<std::string>& line : std::vector<std::vector<std::string>>{
             {"status", "k"}, {"release", "k", "t"}, {"extend", "k", "t"}}) {
        std::vector<std::string> args = {"-E", "3"};
        args.insert(args.end(), line.begin(), line.end());
        refused(Parsed(args), "-E/--conflict-exit-code applies to run and acquire only");
    }
}

TEST(run_command_through_sh_in_every_form) {
    const std::string cmd = "echo hi; sleep 1";
    for (const std::vector<std::string>& args :
         std::vector<std::vector<std::string>>{{"run", "k", "-c", cmd},
                                               {"run", "k", "-c" + cmd},
                                               {"run", "k", "--command", cmd},
                                               {"run", "k", "--command=" + cmd},
                                               {"-c", cmd, "run", "k"},
                                               {"run", "-c", cmd, "k"},
                                               {"run", "k", "-c", cmd, "--"},
                                               {"run", "k", "-c", cmd, "--ttl", "5000"}}) {
        const Parsed p(args);
        if (!accepted(p)) continue;
        CHECK(p.o.command == Command::run);
        CHECK_TEXT(p.o.operands[0], "k");
        CHECK_TEXT(p.o.shell_command, cmd);
        CHECK(p.o.run_argv == nullptr);
    }
    // A value is the next argument even when it starts with a dash.
    const Parsed dash({"run", "k", "-c", "-x"});
    if (accepted(dash)) CHECK_TEXT(dash.o.shell_command, "-x");
    // After the separator, or once COMMAND has started, -c is COMMAND's.
    const Parsed started({"run", "k", "true", "-c", "x", "--", "z"});
    if (accepted(started)) {
        CHECK(started.o.shell_command == nullptr);
        CHECK(started.command() == std::vector<std::string>({"true", "-c", "x", "--", "z"}));
    }
    const Parsed after({"run", "k", "--", "sh", "-c", "exit 3"});
    if (accepted(after)) {
        CHECK(after.o.shell_command == nullptr);
        CHECK(after.command() == std::vector<std::string>({"sh", "-c", "exit 3"}));
    }
}

TEST(run_command_refusals) {
    const char both[] = "run: give either -c CMD or -- COMMAND [ARGS...], not both";
    refused(Parsed({"run", "k", "-c", "true", "--", "true"}), both);
    refused(Parsed({"run", "k", "-c", "true", "true"}), both);
    refused(Parsed({"-c", "true", "run", "k", "--", "echo"}), both);
    refused(Parsed({"run", "k", "-c", ""}), "-c/--command needs a command for sh -c");
    refused(Parsed({"run", "k", "--command="}), "-c/--command needs a command for sh -c");
    for (const std::vector<std::string>& line : std::vector<std::vector<std::string>>{
             {"acquire", "k"}, {"status", "k"}, {"release", "k", "t"}, {"extend", "k", "t"}}) {
        std::vector<std::string> args = line;
        args.insert(args.end(), {"-c", "true"});
        refused(Parsed(args), "-c/--command applies to run only (resplock run KEY -c CMD)");
    }
    refused(Parsed({"run", "k", "-c"}), "option -c needs a value");
}

TEST(short_options_are_not_bundled) {
    for (const char* arg : {"-nE", "-n3", "-nw5", "-hn", "-nh", "-n-"}) {
        refused(Parsed({arg, "3", "acquire", "k"}),
                std::string("unknown option '") + arg + "' (-" + arg[1] +
                    " takes no value, and short options are not bundled: give each on its own)");
    }
    // A short option that takes a value takes the rest of its argument: here '-n' is -E's value.
    refused(Parsed({"-E-n", "acquire", "k"}), "got '-n'");
    refused(Parsed({"-w-n", "acquire", "k"}), std::string(seconds_refusal) + "-n'");
    const Parsed c({"run", "k", "-c-n"});
    if (accepted(c)) CHECK_TEXT(c.o.shell_command, "-n");
}

// ---------------------------------------------------------------------------------------------
// Help per command: resplock help [COMMAND], resplock COMMAND --help

namespace {

const std::vector<std::string> command_list = {"acquire", "release", "extend", "status", "run"};

std::string whole_help() {
    return Parsed({"--help"}).out;
}

// The lines of a text.
std::vector<std::string> lines_of(const std::string& text) {
    std::vector<std::string> lines;
    std::size_t start = 0;
    while (start < text.size()) {
        const std::size_t end = text.find('\n', start);
        lines.push_back(text.substr(start, end - start));
        if (end == std::string::npos) break;
        start = end + 1;
    }
    return lines;
}

}  // namespace

TEST(help_command_prints_the_whole_help) {
    const std::string all = whole_help();
    for (const std::vector<std::string>& args : std::vector<std::vector<std::string>>{
             {"help"}, {"help", "help"}, {"help", "-h"}, {"--ttl", "5", "help"}}) {
        const Parsed p(args);
        const bool ok =
            CHECK_EQ(p.code, resplock_cli::exit_ok) && CHECK(p.err.empty()) && CHECK_EQ(p.out, all);
        if (!ok) p.show();
    }
    CHECK(contains(all, "  help [COMMAND]           show this help, or COMMAND's alone"));
}

TEST(help_of_each_command_in_every_form) {
    for (const std::string& command : command_list) {
        const Parsed topic({"help", command});
        if (!CHECK_EQ(topic.code, resplock_cli::exit_ok) || !CHECK(topic.err.empty())) {
            topic.show();
            continue;
        }
        CHECK(topic.out.rfind("Usage: resplock [OPTIONS] " + command, 0) == 0);
        CHECK(topic.out != whole_help());
        // The same text after the command, with --help or -h, whatever else is on the line.
        for (const std::vector<std::string>& args :
             std::vector<std::vector<std::string>>{{command, "--help"},
                                                   {command, "-h"},
                                                   {command, "k", "-h"},
                                                   {"--ttl", "5000", command, "k", "--help"},
                                                   {command, "-h", "--bogus"}}) {
            const Parsed p(args);
            const bool ok = CHECK_EQ(p.code, resplock_cli::exit_ok) && CHECK(p.err.empty()) &&
                            CHECK_EQ(p.out, topic.out);
            if (!ok) p.show();
        }
        // --help before the command: the whole help.
        const Parsed before({"--help", command});
        CHECK_EQ(before.out, whole_help());
    }
}

TEST(help_of_a_command_shows_what_applies_to_it) {
    struct Case {
        const char* command;
        std::vector<const char*> present;
        std::vector<const char*> absent;
    };
    const std::vector<Case> cases = {
        {"acquire",
         {"Usage: resplock [OPTIONS] acquire KEY\n", "  acquire KEY              take the lock",
          "--wait MS", "-w, --wait-seconds SECONDS", "-n, --nonblock",
          "-E, --conflict-exit-code CODE", "--ttl MS", "--fence", "--once-per MS", "--url URL",
          "-h, --help", "    0  ", "   64  ", "   69  ", "   74  ", "   75  ", "   76  ", "   77  ",
          "token=$(resplock --ttl 120000 acquire deploy)"},
         {"-c, --command", "--version", "    1  ", "   70  ", "  126  ", "  127  ", "release KEY",
          "run KEY"}},
        {"release",
         {"Usage: resplock [OPTIONS] release KEY TOKEN\n", "--wake", "--fair", "--limit N",
          "    1  ", "   64  ", "   69  "},
         {"--wait MS", "-w, --wait-seconds", "-n, --nonblock", "-E, --conflict", "-c, --command",
          "--ttl MS", "--fence  ", "   74  ", "   75  ", "   70  ", "  127  "}},
        {"extend",
         {"Usage: resplock [OPTIONS] extend KEY TOKEN\n", "--ttl MS", "--replicas N", "    1  "},
         {"--wait MS", "-n, --nonblock", "-E, --conflict", "      --wake  ", "   75  ", "   70  "}},
        {"status",
         {"Usage: resplock [OPTIONS] status KEY\n", "held forever", "--limit N", "    1  "},
         {"--ttl MS", "--wait MS", "-E, --conflict", "--fence  ", "   75  ", "Examples:"}},
        {"run",
         {"Usage: resplock [OPTIONS] run KEY -- COMMAND [ARG...]\n"
          "       resplock [OPTIONS] run KEY -c CMD\n",
          "-c, --command CMD", "-n, --nonblock", "-E, --conflict-exit-code CODE", "   70  ",
          "   75  ", "  126  ", "  127  ", "  any other: ", "RESPLOCK_TOKEN",
          "resplock --wait 60000 run nightly-backup"},
         {"    1  ", "   74  ", "acquire KEY ", "token=$(resplock"}},
    };
    for (const Case& c : cases) {
        const Parsed p({"help", c.command});
        for (const char* word : c.present) {
            if (!CHECK(contains(p.out, word)))
                std::printf("      %s: missing %s\n", c.command, word);
        }
        for (const char* word : c.absent) {
            if (!CHECK(!contains(p.out, word)))
                std::printf("      %s: present %s\n", c.command, word);
        }
    }
}

TEST(help_of_a_command_is_made_of_the_whole_helps_lines) {
    // Each text is written once: every line of a command's help, but its Usage lines, is a line
    // of the whole help.
    const std::vector<std::string> all = lines_of(whole_help());
    for (const std::string& command : command_list) {
        const Parsed p({"help", command});
        for (const std::string& line : lines_of(p.out)) {
            if (line.rfind("Usage: ", 0) == 0 || line.rfind("       resplock ", 0) == 0) continue;
            bool found = false;
            for (const std::string& l : all)
                found = found || l == line;
            if (!CHECK(found))
                std::printf("      %s: not in --help: '%s'\n", command.c_str(), line.c_str());
        }
    }
}

TEST(help_refuses_unknown_commands_and_extra_words) {
    refused(
        Parsed({"help", "nosuch"}),
        "help: unknown command 'nosuch' (commands: acquire, release, extend, status, run, list, "
        "help)");
    refused(Parsed({"help", "RUN"}), "help: unknown command 'RUN'");
    refused(Parsed({"help", ""}), "help: unknown command ''");
    refused(Parsed({"help", "run", "acquire"}),
            "help: too many arguments (resplock help [COMMAND])");
    refused(Parsed({"help", "--bogus"}), "unknown option '--bogus'");
    refused(Parsed({"help", "--ttl", "0"}), "--ttl: expected");
    // An unknown command before --help is refused, as before.
    refused(Parsed({"frob", "--help"}), "unknown command 'frob'");
}

TEST(help_text_names_the_flock_options) {
    const std::string all = whole_help();
    for (const char* word : {"-w, --wait-seconds SECONDS", "-n, --nonblock",
                             "-E, --conflict-exit-code CODE", "-c, --command CMD", "run KEY -c CMD",
                             "not bundled: -n -E 3, not -nE 3", "-E CODE: CODE instead of 75"}) {
        if (!CHECK(contains(all, word))) std::printf("      missing: %s\n", word);
    }
}

TEST(flock_options_left_out_are_refused) {
    // docs/cli.md says why: one exclusive mode, -u is --url, run always forks.
    for (const char* arg : {"-s", "--shared", "-x", "-e", "--exclusive", "--unlock", "-o",
                            "--close", "-F", "--no-fork", "--fcntl"}) {
        refused(Parsed({arg, "acquire", "k"}), std::string("unknown option '") + arg + "'");
    }
}

TEST(short_option_with_an_equals_sign_takes_it_as_its_value) {
    refused(Parsed({"-w=5", "acquire", "k"}), std::string(seconds_refusal) + "=5'");
    refused(Parsed({"-E=3", "acquire", "k"}), "got '=3'");
    const Parsed c({"run", "k", "-c=x"});
    if (accepted(c)) CHECK_TEXT(c.o.shell_command, "=x");
}
