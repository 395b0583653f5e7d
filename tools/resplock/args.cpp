// parse_args() and complete_options() (see args.hpp): each argument of the command line in turn,
// then the checks on the whole.
#include "args.hpp"

#include <cstdio>
#include <cstring>

#include "exit_codes.hpp"
#include "resplock/core/lock.hpp"
#include "resplock/core/validity.hpp"
#include "resplock/variants/semaphore.hpp"
#include "text.hpp"
#include "url.hpp"
#include "usage.hpp"

namespace resplock_cli {

namespace {

Command command_from(const char* name) {
    const std::string_view n(name);
    if (n == "acquire") return Command::acquire;
    if (n == "release") return Command::release;
    if (n == "extend") return Command::extend;
    if (n == "status") return Command::status;
    if (n == "run") return Command::run;
    if (n == "list") return Command::list;
    return Command::none;
}

// Adds the URLs of one --url value (or of REDIS_URL): one URL, or several separated by commas,
// each starting with redis://, rediss://, redis-sentinel:// or rediss-sentinel:// (the commas
// between the sentinels of one URL do not split it).
bool add_urls(Options& o, const char* value) {
    std::string_view rest(value);
    for (;;) {
        const std::size_t cut = url_list_cut(rest);
        if (o.url_count == RESPLOCK_MAX_SERVERS) {
            report("too many servers: at most %d URLs (a quorum lock over up to %d servers)",
                   RESPLOCK_MAX_SERVERS, RESPLOCK_MAX_SERVERS);
            return false;
        }
        o.urls[o.url_count++] = slice(rest, 0, cut);
        if (cut == rest.size()) return true;
        rest.remove_prefix(cut + 1);
    }
}

// --owner LABEL: at most RESPLOCK_MAX_OWNER_LEN bytes of A-Z a-z 0-9 . _ - (empty: no label).
bool set_owner(Options& o, const char* value) {
    const std::size_t n = std::strlen(value);
    bool ok = n <= RESPLOCK_MAX_OWNER_LEN;
    for (std::size_t i = 0; ok && i < n; ++i)
        ok = resplock::owner_label_char(value[i]);
    if (!ok) {
        report("--owner: expected at most %d characters of A-Z a-z 0-9 . _ -, got '%s'",
               RESPLOCK_MAX_OWNER_LEN, Shown(value).text);
        return false;
    }
    std::memcpy(o.owner, value, n + 1);
    o.owner_given = true;
    return true;
}

// A number option (--replicas N, --limit N): a whole number of `what` in lo..hi.
bool set_number(std::string_view name, const char* what, std::uint32_t lo, std::uint32_t hi,
                const char* value, std::uint32_t& out) {
    if (!parse_number(value, lo, hi, out)) {
        report("--%.*s: expected a whole number of %s in %u..%u, got '%s'",
               static_cast<int>(name.size()), name.data(), what, lo, hi, Shown(value).text);
        return false;
    }
    return true;
}

// A time (--ttl, --wait, --timeout, --once-per): a whole number, then a unit, ms, s, m or h, in
// lowercase; without one, milliseconds. No sign, blank, fraction or other unit; at most hi ms.
// Sets out only when it returns true.
bool parse_duration(std::string_view text, std::uint32_t lo, std::uint32_t hi, std::uint32_t& out) {
    std::size_t digits = 0;
    while (digits < text.size() && is_digit(text[digits]))
        ++digits;
    const std::string_view unit = slice(text, digits);
    std::uint64_t scale = 0;
    if (unit.empty() || unit == "ms") {
        scale = 1;
    } else if (unit == "s") {
        scale = 1000;
    } else if (unit == "m") {
        scale = 60000;
    } else if (unit == "h") {
        scale = 3600000;
    } else {
        return false;
    }
    std::uint32_t count = 0;
    if (!parse_number(slice(text, 0, digits), 0, hi, count)) return false;
    const std::uint64_t ms = std::uint64_t{count} * scale;
    if (ms < lo || ms > hi) return false;
    out = static_cast<std::uint32_t>(ms);
    return true;
}

// A time option: a duration in lo..max_ms milliseconds.
bool set_duration(std::string_view name, std::uint32_t lo, const char* value, std::uint32_t& out) {
    if (!parse_duration(value, lo, max_ms, out)) {
        report(
            "--%.*s: expected a whole number of milliseconds in %u..%u, or of ms, s, m or h "
            "(1500ms, 30s, 5m, 2h), got '%s'",
            static_cast<int>(name.size()), name.data(), lo, max_ms, Shown(value).text);
        return false;
    }
    return true;
}

// The shortest TTL that leaves a holder any validity: Validity grants TTL less its drift
// allowance (TTL/100 + 2 ms), nothing when the TTL does not exceed it.
constexpr std::uint32_t shortest_ttl_ms() {
    std::uint32_t ttl = 1;
    while (ttl <= resplock::detail::drift_ms(ttl))
        ++ttl;
    return ttl;
}
constexpr std::uint32_t min_ttl_ms = shortest_ttl_ms();
static_assert(min_ttl_ms == 3, "--help and docs/cli.md state the shortest TTL: 3 ms");

// -w/--wait-seconds SECONDS (flock's -w): a decimal number of seconds, "5", "2.5", ".5", "0.001",
// in milliseconds: at most 3 decimals count, more only when they are zeros ("0.0010"; "0.0015" is
// finer than a millisecond). No sign, blank, exponent or unit; at most max_ms ms (2147483.647).
// Sets out only when it returns true.
bool parse_seconds(std::string_view text, std::uint32_t& out) {
    std::uint64_t ms = 0;
    std::size_t i = 0;
    for (; i < text.size() && is_digit(text[i]); ++i) {
        ms = ms * 10 + static_cast<std::uint64_t>(text[i] - '0');
        if (ms > max_ms) return false;  // also keeps ms * 1000 below 2^64
    }
    const std::size_t whole_digits = i;
    ms *= 1000;
    std::size_t decimals = 0;
    if (i < text.size() && text[i] == '.') {
        for (++i; i < text.size() && is_digit(text[i]); ++i, ++decimals) {
            const auto digit = static_cast<std::uint64_t>(text[i] - '0');
            if (decimals < 3) {
                ms += digit * (decimals == 0 ? 100U : decimals == 1 ? 10U : 1U);
            } else if (digit != 0) {
                return false;  // finer than a millisecond
            }
        }
    }
    if (i != text.size() || whole_digits + decimals == 0 || ms > max_ms) return false;
    out = static_cast<std::uint32_t>(ms);
    return true;
}

bool set_seconds(const char* value, std::uint32_t& out) {
    if (!parse_seconds(value, out)) {
        report(
            "-w/--wait-seconds: expected a number of seconds in 0..2147483.647 with at most 3 "
            "decimals (5, 2.5, 0.001), got '%s'",
            Shown(value).text);
        return false;
    }
    return true;
}

// --wait, -w and -n each set how long to wait for a busy lock: one of them only (given again,
// the same one's last value counts, as for every value option).
bool set_wait_option(Options& o, const char* option) {
    if (o.wait_option != nullptr && std::strcmp(o.wait_option, option) != 0) {
        report("%s and %s cannot be combined: both set how long to wait for a busy lock",
               o.wait_option, option);
        return false;
    }
    o.wait_option = option;
    return true;
}

// -E/--conflict-exit-code CODE: an exit status, 0..255.
bool set_busy_exit(Options& o, const char* value) {
    std::uint32_t code = 0;
    if (!parse_number(value, 0, 255, code)) {
        report(
            "-E/--conflict-exit-code: expected an exit status, a whole number in 0..255, got '%s'",
            Shown(value).text);
        return false;
    }
    o.busy_exit = static_cast<int>(code);
    o.busy_exit_given = true;
    return true;
}

// --ttl MS: a number option, and long enough to leave some validity.
bool set_ttl(const char* value, std::uint32_t& out) {
    std::uint32_t ttl = 0;
    if (!parse_duration(value, 0, max_ms, ttl))
        return set_duration("ttl", min_ttl_ms, value, out);  // reports
    if (ttl < min_ttl_ms) {
        report(
            "--ttl: expected at least %u ms, got '%s': a lock is valid for TTL - TTL/100 - 2 ms, "
            "so a shorter TTL would leave no validity at all",
            min_ttl_ms, Shown(value).text);
        return false;
    }
    out = ttl;
    return true;
}

// Values an option takes.
bool apply_option(Options& o, std::string_view name, const char* value) {
    std::uint32_t* number = nullptr;
    std::uint32_t lo = 1;
    if (name == "ttl") {
        return set_ttl(value, o.ttl_ms);
    } else if (name == "wait") {
        if (!set_wait_option(o, "--wait")) return false;
        number = &o.wait_ms;
        lo = 0;
    } else if (name == "wait-seconds") {
        return set_wait_option(o, "-w/--wait-seconds") && set_seconds(value, o.wait_ms);
    } else if (name == "conflict-exit-code") {
        return set_busy_exit(o, value);
    } else if (name == "command") {
        if (*value == '\0') {
            report("-c/--command needs a command for sh -c");
            return false;
        }
        o.shell_command = value;
        return true;
    } else if (name == "timeout") {
        number = &o.timeout_ms;
    } else if (name == "once-per") {
        number = &o.once_per_ms;
    } else if (name == "url") {
        return add_urls(o, value);
    } else if (name == "owner") {
        return set_owner(o, value);
    } else if (name == "replicas") {
        return set_number(name, "replicas", 1, resplock::Lock::max_replicas, value, o.replicas);
    } else if (name == "limit") {
        // Two limits would make two semaphores of one key: a mistake, whichever was meant.
        if (o.limit != 0) {
            report("--limit given twice: give the number of holders once");
            return false;
        }
        return set_number(name, "holders", 1, resplock::Semaphore::max_limit, value, o.limit);
    } else if (name == "max") {
        o.max_given = true;
        return set_number(name, "locks", 1, max_ms, value, o.max);
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
    return set_duration(name, lo, value, *number);
}

bool takes_value(std::string_view name) {
    return name == "url" || name == "password-file" || name == "ttl" || name == "wait" ||
           name == "timeout" || name == "cacert" || name == "cert" || name == "key" ||
           name == "tls-server-name" || name == "once-per" || name == "owner" ||
           name == "replicas" || name == "limit" || name == "max" || name == "wait-seconds" ||
           name == "conflict-exit-code" || name == "command";
}

// Options that take no value.
bool* flag_of(Options& o, std::string_view name) {
    if (name == insecure_flag) return &o.insecure;
    if (name == "fence") return &o.fence;
    if (name == "wake") return &o.wake;
    if (name == "fair") return &o.fair;
    if (name == "json") return &o.json;
    if (name == "verbose") return &o.verbose;
    return nullptr;
}

// Options that take no value and turn something off.
bool* off_flag_of(Options& o, std::string_view name) {
    if (name == "no-client-name") return &o.client_name;
    return nullptr;
}

// Adds one positional argument. For run, the first one after KEY starts COMMAND.
bool add_operand(Options& o, int argc, char** argv, int& i) {
    const char* arg = argv[i];
    if (o.command == Command::none && o.help_command) {
        if (o.help_topic != nullptr) {
            report("help: too many arguments (resplock help [COMMAND])");
            return false;
        }
        o.help_topic = arg;
        return true;
    }
    if (o.command == Command::none && std::strcmp(arg, "help") == 0) {
        o.help_command = true;
        return true;
    }
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

// What follows a "--" at argv[i]. Right after run's KEY it is the separator, and COMMAND is what
// follows, even another "--"; elsewhere the rest are operands (for run, COMMAND then starts
// after KEY and its own separator).
bool add_after_double_dash(Options& o, int argc, char** argv, int i) {
    if (o.command == Command::run && o.operand_count == 1) {
        if (i + 1 < argc) o.run_argv = argv + i + 1;
        return true;
    }
    for (++i; i < argc; ++i) {
        if (!add_operand(o, argc, argv, i)) return false;
    }
    return true;
}

// Splits an argument that starts with '-' into its option name and the value it carries ("=v",
// or "-uURL"; null when none). False (reported) for an unknown short option.
bool split_option(const char* arg, std::string_view& name, const char*& value) {
    value = nullptr;
    if (arg[1] == '-') {
        name = arg + 2;
        const std::size_t eq = name.find('=');
        if (eq != std::string_view::npos) {
            value = arg + 2 + eq + 1;
            name = slice(name, 0, eq);
        }
        return true;
    }
    // Short options that take a value: "-u URL" or "-uURL".
    name = arg[1] == 'u'   ? "url"
           : arg[1] == 'w' ? "wait-seconds"
           : arg[1] == 'E' ? "conflict-exit-code"
           : arg[1] == 'c' ? "command"
                           : "";
    if (!name.empty()) {
        if (arg[2] != '\0') value = arg + 2;
        return true;
    }
    // Flags: alone only (no bundling: "-nE 3" is refused, "-n -E 3" is the way).
    if ((arg[1] == 'h' || arg[1] == 'n') && arg[2] == '\0') {
        name = arg[1] == 'h' ? "help" : "nonblock";
        return true;
    }
    if (arg[1] == 'h' || arg[1] == 'n') {
        report(
            "unknown option '%s' (-%c takes no value, and short options are not bundled: give "
            "each on its own)",
            Shown(arg).text, arg[1]);
        return false;
    }
    report("unknown option '%s' (try 'resplock --help')", Shown(arg).text);
    return false;
}

// `resplock help [COMMAND]`: the whole help, or COMMAND's.
int show_help_topic(const Options& o) {
    if (o.help_topic == nullptr) {
        usage(stdout);
    } else if (!command_usage(stdout, o.help_topic)) {
        report("help: unknown command '%s' (commands: %s)", Shown(o.help_topic).text,
               command_names);
        return exit_usage;
    }
    return std::fflush(stdout) == 0 ? exit_ok : exit_io;
}

// --help or --version: prints it and returns the exit code. --help after a command prints that
// command's help.
int show_help(const Options& o, std::string_view name, const char* value) {
    if (value != nullptr) {
        report("--%.*s takes no value", static_cast<int>(name.size()), name.data());
        return exit_usage;
    }
    if (name == "version") {
        version(stdout);
    } else if (o.help_command) {
        return show_help_topic(o);
    } else if (o.command != Command::none) {
        (void)command_usage(stdout, o.command_name);
    } else {
        usage(stdout);
    }
    return std::fflush(stdout) == 0 ? exit_ok : exit_io;
}

// The option at argv[i] (and its value, from the next argument if it needs one: i moves past it).
// Returns -1 to go on, else the exit code.
int parse_option(Options& o, int argc, char** argv, int& i) {
    const char* arg = argv[i];
    std::string_view name;
    const char* value = nullptr;
    if (!split_option(arg, name, value)) return exit_usage;
    if (name == "help" || name == "version") return show_help(o, name, value);
    if (name == "nonblock") {
        if (value != nullptr) {
            report("--nonblock takes no value");
            return exit_usage;
        }
        o.wait_ms = 0;
        return set_wait_option(o, "-n/--nonblock") ? -1 : exit_usage;
    }
    if (bool* flag = flag_of(o, name); flag != nullptr) {
        if (value != nullptr) {
            report("--%.*s takes no value", static_cast<int>(name.size()), name.data());
            return exit_usage;
        }
        *flag = true;
        return -1;
    }
    if (bool* flag = off_flag_of(o, name); flag != nullptr) {
        if (value != nullptr) {
            report("--%.*s takes no value", static_cast<int>(name.size()), name.data());
            return exit_usage;
        }
        *flag = false;
        return -1;
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
    return apply_option(o, name, value) ? -1 : exit_usage;
}

// KEY (1..RESPLOCK_MAX_KEY_LEN bytes) and, for release and extend, TOKEN (1..max_token_len).
int check_key_and_token(Options& o, bool needs_token) {
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

// list [PATTERN]: at most one operand, any bytes.
int check_list_operands(const Options& o) {
    if (o.operand_count > 1) {
        report("list: too many arguments (try 'resplock --help')");
        return exit_usage;
    }
    return -1;
}

// The command and its operands, once every argument is read.
int check_operands(Options& o) {
    if (o.command == Command::none) {
        report(
            "missing command: acquire, release, extend, status, run or list (try 'resplock "
            "--help')");
        return exit_usage;
    }
    if (o.command == Command::list) return check_list_operands(o);
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
    if (o.shell_command != nullptr && o.command != Command::run) {
        report("-c/--command applies to run only (resplock run KEY -c CMD)");
        return exit_usage;
    }
    if (o.command == Command::run && o.shell_command != nullptr && o.run_argv != nullptr) {
        report("run: give either -c CMD or -- COMMAND [ARGS...], not both");
        return exit_usage;
    }
    if (o.command == Command::run && o.run_argv == nullptr && o.shell_command == nullptr) {
        report(
            "run: missing COMMAND after KEY (resplock run KEY -- COMMAND [ARGS...], or "
            "resplock run KEY -c CMD)");
        return exit_usage;
    }
    return check_key_and_token(o, needs_token);
}

// --limit: the semaphore takes --fair, --fence, --owner, --replicas, the waits and the TTLs, but
// keeps no --once-per marker, needs no --wake (its release wakes a waiter by itself) and lives
// on one server. Returns -1 to go on, else the exit code.
int check_limit(const Options& o) {
    if (o.limit == 0) return -1;
    if (o.once_per_ms != 0) {
        report("--limit does not take --once-per (a semaphore keeps no interval marker)");
    } else if (o.wake) {
        report("--limit does not take --wake (a semaphore's release wakes a waiter by itself)");
    } else if (o.url_count > 1) {
        report("--limit works with one server only, not with a quorum of %d (several URLs in %s)",
               o.url_count, o.url_source);
    } else {
        return -1;
    }
    return exit_usage;
}

// --json, --verbose, --max and list: what they apply to, and one server only. Returns -1 to go
// on, else the exit code.
int check_inspection(const Options& o) {
    const bool inspecting = o.command == Command::status || o.command == Command::list;
    if (o.json && !inspecting) {
        report("--json applies to status and list only");
    } else if (o.verbose && o.command != Command::status) {
        report("--verbose applies to status only");
    } else if (o.json && o.verbose) {
        report("--json and --verbose do not go together: give one");
    } else if (o.max_given && o.command != Command::list) {
        report("--max applies to list only");
    } else if (o.command == Command::list && o.url_count > 1) {
        report(
            "list works with one server (or one Redis Cluster), not with a quorum of %d "
            "(several URLs in %s): list each server on its own",
            o.url_count, o.url_source);
    } else if ((o.json || o.verbose) && o.url_count > 1) {
        report(
            "--json and --verbose work with one server only, not with a quorum of %d (several "
            "URLs in %s)",
            o.url_count, o.url_source);
    } else if (o.command == Command::list && (o.limit != 0 || o.fair || o.fence ||
                                              o.once_per_ms != 0 || o.wake || o.replicas != 0)) {
        report("list takes none of --limit, --fair, --fence, --once-per, --wake, --replicas");
    } else {
        return -1;
    }
    return exit_usage;
}

}  // namespace

int parse_args(int argc, char** argv, Options& o) {
    for (int i = 1; i < argc; ++i) {
        const char* arg = argv[i];
        if (std::strcmp(arg, "--") == 0) {
            if (!add_after_double_dash(o, argc, argv, i)) return exit_usage;
            break;
        }
        if (arg[0] != '-' || arg[1] == '\0') {
            if (!add_operand(o, argc, argv, i)) return exit_usage;
            continue;
        }
        const int r = parse_option(o, argc, argv, i);
        if (r >= 0) return r;
    }
    if (o.help_command) return show_help_topic(o);
    return check_operands(o);
}

int complete_options(Options& o, const char* redis_url) {
    if (o.url_count == 0) {
        if (redis_url != nullptr && *redis_url != '\0') {
            o.url_source = "REDIS_URL";
            if (!add_urls(o, redis_url)) return exit_usage;
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
    if (o.busy_exit_given && o.command != Command::run && o.command != Command::acquire) {
        report("-E/--conflict-exit-code applies to run and acquire only");
        return exit_usage;
    }
    if (const int r = check_limit(o); r >= 0) return r;
    if (const int r = check_inspection(o); r >= 0) return r;
    // A fair waiter waits in its queue and is handed the lock by the release: a once-per marker
    // or a wake list of the plain lock would have no part in that.
    if (o.fair && o.limit == 0 && (o.once_per_ms != 0 || o.wake)) {
        report("--fair takes neither --once-per nor --wake");
        return exit_usage;
    }
    if (o.replicas != 0 && o.command != Command::run && o.command != Command::acquire &&
        o.command != Command::extend) {
        report("--replicas applies to run, acquire and extend only");
        return exit_usage;
    }
    return -1;
}

void default_owner(Options& o, const char* host_name) {
    if (o.owner_given) return;
    std::size_t n = 0;
    for (; host_name != nullptr && host_name[n] != '\0' && n < RESPLOCK_MAX_OWNER_LEN; ++n)
        o.owner[n] = resplock::owner_label_char(host_name[n]) ? host_name[n] : '-';
    o.owner[n] = '\0';
}

}  // namespace resplock_cli
