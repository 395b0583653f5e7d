// The --help and --version texts (see usage.hpp). The help is made of pieces, each written once:
// a command's entry, an option's, an exit status's, an example. Each piece names the commands it
// applies to: the whole help prints them all, a command's help the ones for that command. The
// build's TLS support is written into the TLS piece at compile time.
#include "usage.hpp"

#include <cstring>

#include "resplock/core/config.h"
#include "resplock/version.h"
#ifdef RESPLOCK_CLI_TLS
#include "mbedtls/version.h"
#endif

namespace resplock_cli {

namespace {

#define RESPLOCK_CLI_TEXT(x) #x
#define RESPLOCK_CLI_NUMBER(x) RESPLOCK_CLI_TEXT(x)

// The commands a piece applies to: one bit each.
constexpr unsigned acquire = 1U;
constexpr unsigned release = 2U;
constexpr unsigned extend = 4U;
constexpr unsigned status = 8U;
constexpr unsigned run = 16U;
constexpr unsigned list = 32U;
constexpr unsigned every = acquire | release | extend | status | run | list;
constexpr unsigned locking = acquire | release | extend | status | run;  // all but list
constexpr unsigned whole_help_only = 0U;

struct Piece {
    unsigned commands;
    const char* text;
};

// A command: its name, its synopsis (one or two forms, after "resplock [OPTIONS] ") and what it
// does. The text's first line follows the synopsis column; the others carry their indentation.
struct CommandHelp {
    const char* name;
    unsigned bit;
    const char* synopsis[2];
    const char* text;
};

constexpr int text_column = 27;  // where a command's or an option's description starts

constexpr const char intro[] =
    "Usage: resplock [OPTIONS] COMMAND ...\n"
    "\n"
    "A lock shared by every host that reaches one Redis server, for shell scripts and cron\n"
    "jobs (like flock(1), but across machines). The Redis key is exactly KEY.\n"
    "\n"
    "Commands:\n";

constexpr CommandHelp commands[] = {
    {"acquire",
     acquire,
     {"acquire KEY", nullptr},
     "take the lock and print its token on stdout (with --fence:\n"
     "                           TOKEN FENCE); the lock stays until its TTL ends or it is\n"
     "                           released with the token\n"},
    {"release",
     release,
     {"release KEY TOKEN", nullptr},
     "release the lock, only if TOKEN still owns it\n"},
    {"extend",
     extend,
     {"extend KEY TOKEN", nullptr},
     "reset the lock's TTL to --ttl, only if TOKEN still owns it\n"},
    {"status",
     status,
     {"status KEY", nullptr},
     "print \"held <remaining-ms>\" or \"free\"; a holder whose\n"
     "                           token carries an owner label: \"held <remaining-ms> <label>\"\n"
     "                           A key without a TTL (set by hand): \"held forever\" (exit 0)\n"
     "                           With --limit N: \"held K/N\" (K live leases) or \"free 0/N\",\n"
     "                           then one line per lease, \"<remaining-ms> <label>\" (no label:\n"
     "                           \"<remaining-ms>\"), the first to end first; fair waiters\n"
     "                           queued are counted on stderr\n"
     "                           --json: one JSON object; --verbose: every field, one a line\n"},
    {"list",
     list,
     {"list [PATTERN]", nullptr},
     "every lock whose key matches PATTERN (SCAN; default *), of\n"
     "                           every kind, one per line: KEY KIND REMAINING FENCE WAITERS\n"
     "                           HOLDERS (owner labels; never a token); companion keys left\n"
     "                           out; a Redis Cluster: every master, once. Exit 0, even when\n"
     "                           none matches\n"},
    {"run",
     run,
     {"run KEY -- COMMAND [ARG...]", "run KEY -c CMD"},
     "take the lock, run COMMAND while holding it (renewed at\n"
     "                           least every ttl/3), and exit with COMMAND's status (128+N if\n"
     "                           it died of signal N), or 70 if the lock was lost meanwhile,\n"
     "                           whatever COMMAND returned. COMMAND runs in a process group\n"
     "                           of its own; the lock is released only once COMMAND and every\n"
     "                           process it started that stayed in that group (background\n"
     "                           jobs included) have ended. A process that leaves the group\n"
     "                           (setsid, setpgid, daemons) is neither waited for nor stopped.\n"
     "                           COMMAND sees RESPLOCK_KEY and RESPLOCK_TOKEN (and\n"
     "                           RESPLOCK_FENCE with --fence, RESPLOCK_LIMIT with --limit),\n"
     "                           and REDIS_URL only if no URL in it carries a password.\n"
     "                           SIGINT, SIGTERM and SIGHUP sent to resplock go to the group.\n"
     "                           If the lock is lost, the group gets SIGTERM, then SIGKILL\n"
     "                           after a grace of min(2 s, TTL/4), all before the lock's\n"
     "                           validity ends (SIGKILL at once if the key is already gone or\n"
     "                           taken). If resplock dies (even of SIGKILL) or is stopped\n"
     "                           until the validity ends, the group is killed.\n"
     "                           On a terminal, COMMAND gets the foreground; job control\n"
     "                           (Ctrl-Z) is not supported.\n"
     "                           -c CMD: COMMAND is /bin/sh -c CMD (flock's form), so CMD\n"
     "                           may hold shell syntax; its status is sh's\n"},
    {"help",
     whole_help_only,
     {"help [COMMAND]", nullptr},
     "show this help, or COMMAND's alone (its options and exit\n"
     "                           status); also: resplock COMMAND --help\n"},
};

// The TLS options' last line, in a build without TLS.
#ifdef RESPLOCK_CLI_TLS
constexpr const char no_tls_note[] = "";
#else
constexpr const char no_tls_note[] =
    "                           (this build has no TLS support: rediss:// is refused)\n";
#endif

constexpr const char options_heading[] =
    "\n"
    "Options (before or after the command; --opt=value works too, and for the short ones\n"
    "-w 5 or -w5; short options are not bundled: -n -E 3, not -nE 3). A time (MS) is a\n"
    "whole number of milliseconds, or of a unit in lowercase: 1500ms, 30s, 5m, 2h; at most\n"
    "2147483647 ms (596h, 35791m); no sign, blank or fraction:\n";

constexpr Piece options[] = {
    {every,
     "  -u, --url URL            redis://[[user]:password@]host[:port][/db]\n"
     "                           (IPv6: redis://[::1]:6379; %XX escapes in user and password)\n"
     "                           rediss://... is the same over TLS (needs --cacert)\n"
     "                           default: $REDIS_URL, else redis://127.0.0.1:6379\n"
     "                           A single URL may name any node of a Redis Cluster: MOVED\n"
     "                           and ASK are followed (at most 5 per request)\n"
     "                           Several URLs (--url given up to 5 times, or one value with\n"
     "                           URLs separated by commas) make a quorum lock (Redlock): held\n"
     "                           only while a majority of those independent servers hold it\n"
     "                           (cluster redirections are not followed there)\n"
     "                           redis-sentinel://[[user]:password@]host[:port][,host[:port]\n"
     "                           ...][/db]#MASTERNAME: the master that Redis Sentinel names\n"
     "                           MASTERNAME, asked of up to 5 sentinels in order (port\n"
     "                           26379 by default; user and password are the master's),\n"
     "                           confirmed with ROLE and followed through a failover;\n"
     "                           rediss-sentinel://... is the same over TLS (sentinels and\n"
     "                           master). Its commas separate sentinels, not URLs\n"},
    {every,
     "      --password-file PATH read the password from the first line of PATH (keeps it out\n"
     "                           of ps); overrides a password in the URL(s)\n"},
    {acquire | run | extend,
     "      --ttl MS             lock time-to-live in milliseconds (3..2147483647: a lock is\n"
     "                           valid for TTL - TTL/100 - 2 ms, none left below 3 ms)\n"
     "                           default: 30000\n"},
    {acquire | run,
     "      --wait MS            how long acquire and run wait for a busy lock\n"
     "                           default: 0 (a single attempt)\n"},
    {acquire | run,
     "  -w, --wait-seconds SECONDS\n"
     "                           acquire/run: --wait in seconds, as flock -w: 5, 2.5, .5,\n"
     "                           0.001 (at most 3 decimals, more only if zeros;\n"
     "                           0..2147483.647); not with --wait or -n (64)\n"},
    {acquire | run,
     "  -n, --nonblock           acquire/run: fail at once if the lock is busy (75, or -E's\n"
     "                           CODE): a single attempt, as --wait 0; not with --wait or\n"
     "                           -w (64)\n"},
    {acquire | run,
     "  -E, --conflict-exit-code CODE\n"
     "                           acquire/run: exit with CODE (0..255) instead of 75 when the\n"
     "                           lock is busy (--limit: all N places taken)\n"},
    {run,
     "  -c, --command CMD        run: run /bin/sh -c CMD as COMMAND (flock's form: run KEY\n"
     "                           -c CMD); not with -- COMMAND, nor CMD empty (64)\n"},
    {every,
     "      --timeout MS         connect and per-command I/O timeout (1..2147483647);\n"
     "                           a refused release is retried for half of it\n"
     "                           default: 2000\n"},
    {every,
     "      --owner LABEL        acquire/run: tokens are LABEL:<random hex>, so that\n"
     "                           'redis-cli GET KEY' and status show who holds the lock;\n"
     "                           up to " RESPLOCK_CLI_NUMBER(
         RESPLOCK_MAX_OWNER_LEN) " characters of A-Z a-z 0-9 . _ - ('' for none);\n"
                                 "                           also the client name (CLIENT SETNAME) "
                                 "on every connection\n"
                                 "                           default: the host name, other "
                                 "characters made '-', cut\n"
                                 "                           to " RESPLOCK_CLI_NUMBER(
                                     RESPLOCK_MAX_OWNER_LEN) "\n"},
    {every,
     "      --no-client-name     do not send CLIENT SETNAME (a server that refuses it is\n"
     "                           no error either way)\n"},
    {locking,
     "One server only (not with several URLs). Companion keys are {KEY}:fence, {KEY}:once,\n"
     "{KEY}:wake... in KEY's cluster slot; when KEY has a non-empty {hash tag}, KEY itself\n"
     "is the prefix (locks:{job}:fence):\n"},
    {acquire | run,
     "      --fence              acquire/run: also take a fencing number: 64 bits, increasing\n"
     "                           per KEY (the larger of counter {KEY}:fence + 1 and the\n"
     "                           server's clock in microseconds); give it to the resource you\n"
     "                           protect so that it can refuse a holder whose lock expired\n"},
    {acquire | run,
     "      --once-per MS        acquire/run: at most once per MS by anyone: busy (75) until\n"
     "                           MS have passed since the last acquisition, even if it was\n"
     "                           released early (marker {KEY}:once, on the server's clock)\n"},
    {acquire | run | release,
     "      --wake               wait by blocking on {KEY}:wake (BLPOP) instead of polling,\n"
     "                           and wake a waiter on release; every party should use it\n"},
    {locking,
     "      --fair               first come, first served: waiters queue in arrival order\n"
     "                           and release hands the lock to the first live one (queue\n"
     "                           {KEY}:q, or KEY:q when KEY has a {hash tag}); for acquire,\n"
     "                           run, release (hands over); takes --fence, --owner and\n"
     "                           --replicas; not with --once-per or --wake\n"},
    {acquire | run | extend,
     "      --replicas N         acquire/run/extend: after taking or extending the lock, wait\n"
     "                           (WAIT, within --timeout) for N replicas to acknowledge it;\n"
     "                           fewer: the lock is released (69); in run a renewal they do\n"
     "                           not acknowledge is retried while the lock lasts; one\n"
     "                           server only, not with --fair (but with --limit --fair)\n"},
    {locking,
     "      --limit N            a counting semaphore instead of a lock: at most N holders of\n"
     "                           KEY at once (1..65535), each with a lease (a token) of its\n"
     "                           own; acquire/run take one, release/extend act on TOKEN's,\n"
     "                           status lists them (sorted set KEY, fencing counter\n"
     "                           {KEY}:fence); every party should give the same N. Takes\n"
     "                           --fair, --fence, --owner, --replicas, --wait, --ttl; not\n"
     "                           with --once-per, --wake (a release wakes a waiter anyway)\n"},
    {status | list, "Inspection (status, list; one server or one Redis Cluster, not a quorum):\n"},
    {status | list,
     "      --json               status, list: one JSON object per line (fields in\n"
     "                           docs/cli.md); keys escaped, no token ever shown\n"},
    {status,
     "      --verbose            status: kind, owner, remaining, count, fence, waiters and\n"
     "                           each lease, one \"name value\" line each\n"},
    {list,
     "      --max N              list: at most N locks, saying on stderr when more match\n"
     "                           default: 1000\n"},
    {every,
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
     "                           and read the password. Prints a warning on every use.\n"},
    {every, no_tls_note},
    {every,
     "\n"
     "  -h, --help               show this help and exit\n"},
    {whole_help_only, "      --version            show the version and exit\n"},
};

constexpr const char exit_heading[] = "\nExit status:\n";

constexpr Piece exit_codes[] = {
    {every, "    0  done (status: the lock or a lease is held)\n"},
    {release | extend | status,
     "    1  release/extend: TOKEN does not own KEY (expired or taken), or with --limit\n"
     "       holds no live lease; status: free\n"},
    {every,
     "   64  usage error (unknown option, missing or extra argument, bad number, bad key)\n"},
    {every,
     "   69  server unreachable, connection lost or timed out, or unable to serve\n"
     "       the lock now (loading, running a script, out of memory, read-only replica,\n"
     "       a Redis Cluster failing over or that keeps redirecting, a master short of\n"
     "       replicas: NOREPLICAS), too few replicas acknowledged it (--replicas; says\n"
     "       how many did), or Sentinel: no sentinel reachable, master name unknown, or\n"
     "       no master found\n"},
    {run,
     "   70  run: the lock was lost while COMMAND ran, whatever COMMAND returned:\n"
     "       COMMAND's group was stopped, or the release found the key gone or taken\n"
     "       (the message gives COMMAND's own status)\n"},
    {acquire, "   74  acquire: the token could not be written to stdout (the lock is released)\n"},
    {acquire | run,
     "   75  the lock is busy (--limit: all N places taken): not acquired within --wait\n"
     "       (or -w; at once with -n); -E CODE: CODE instead of 75\n"},
    {every, "   76  protocol error or unexpected reply from the server\n"},
    {every,
     "   77  authentication or permission refused; TLS: the server's certificate\n"
     "       failed verification\n"},
    {run, "  126  run: COMMAND was found but could not be started\n"},
    {run, "  127  run: COMMAND not found\n"},
    {run, "  any other: run: COMMAND's own exit status\n"},
};

constexpr const char examples_heading[] = "\nExamples:\n";

constexpr Piece examples[] = {
    {run,
     "  # a cron job that must never run twice at once, on any host:\n"
     "  resplock --wait 60000 run nightly-backup -- /usr/local/bin/backup.sh\n"},
    {run,
     "\n"
     "  # the same in flock's words: wait up to 60 s, exit 1 if still busy:\n"
     "  resplock -w 60 -E 1 run nightly-backup -c '/usr/local/bin/backup.sh >>/tmp/b.log'\n"},
    {run,
     "\n"
     "  # at most once an hour across the fleet, whoever gets there first:\n"
     "  resplock --once-per 3600000 run hourly-report -- ./report.sh\n"},
    {run,
     "\n"
     "  # at most 10 updates at once across the fleet, each waiting up to an hour:\n"
     "  resplock --limit 10 --wait 3600000 run fleet:ota -- ./update.sh\n"},
    {acquire | release,
     "\n"
     "  # take the lock in one step and release it in another:\n"
     "  token=$(resplock --ttl 120000 acquire deploy) || exit\n"
     "  ./deploy.sh\n"
     "  resplock release deploy \"$token\"\n"},
};

// What the build has: TLS (the mbedTLS it was compiled against) and how it is linked
// (RESPLOCK_CLI_STATIC: `make STATIC=1`, scripts/static.sh).
#ifdef RESPLOCK_CLI_TLS
#define RESPLOCK_CLI_TLS_TEXT "TLS: mbedTLS " MBEDTLS_VERSION_STRING
#else
#define RESPLOCK_CLI_TLS_TEXT "TLS: none (rediss:// URLs are refused)"
#endif
#ifdef RESPLOCK_CLI_STATIC
#define RESPLOCK_CLI_LINKED_TEXT "static"
#else
#define RESPLOCK_CLI_LINKED_TEXT "dynamic"
#endif
constexpr const char version_text[] = "resplock " RESPLOCK_VERSION "\n" RESPLOCK_CLI_TLS_TEXT
                                      "\nlinked: " RESPLOCK_CLI_LINKED_TEXT "\n";

// A command's entry of the "Commands:" list: its synopsis, then what it does from text_column on
// (on a line of its own after two synopses, or one too long for the column).
void print_entry(std::FILE* out, const CommandHelp& c) {
    const int width = text_column - 3;
    if (c.synopsis[1] == nullptr &&
        std::strlen(c.synopsis[0]) <= static_cast<std::size_t>(width - 1)) {
        (void)std::fprintf(out, "  %-*s %s", width, c.synopsis[0], c.text);
        return;
    }
    for (const char* synopsis : c.synopsis) {
        if (synopsis != nullptr) (void)std::fprintf(out, "  %s\n", synopsis);
    }
    (void)std::fprintf(out, "%*s%s", text_column, "", c.text);
}

// The pieces that apply to `mask` (all of them for mask 0, the whole help), after `heading` when
// there is any. A piece may start with a blank line that separates it from the one before: the
// first one printed leaves it out.
template <std::size_t N>
void print_section(std::FILE* out, const char* heading, const Piece (&pieces)[N], unsigned mask) {
    bool first = true;
    for (const Piece& p : pieces) {
        if (mask != 0 && (p.commands & mask) == 0) continue;
        const char* text = p.text;
        if (first) {
            (void)std::fputs(heading, out);
            if (text[0] == '\n') ++text;
        }
        first = false;
        (void)std::fputs(text, out);
    }
}

void print_sections(std::FILE* out, unsigned mask) {
    print_section(out, options_heading, options, mask);
    print_section(out, exit_heading, exit_codes, mask);
    print_section(out, examples_heading, examples, mask);
}

}  // namespace

const char command_names[] = "acquire, release, extend, status, run, list, help";

void usage(std::FILE* out) {
    (void)std::fputs(intro, out);
    for (const CommandHelp& c : commands)
        print_entry(out, c);
    print_sections(out, 0);
}

bool command_usage(std::FILE* out, std::string_view name) {
    for (const CommandHelp& c : commands) {
        if (name != c.name) continue;
        if (c.bit == whole_help_only) {
            usage(out);
            return true;
        }
        (void)std::fprintf(out, "Usage: resplock [OPTIONS] %s\n", c.synopsis[0]);
        if (c.synopsis[1] != nullptr)
            (void)std::fprintf(out, "       resplock [OPTIONS] %s\n", c.synopsis[1]);
        (void)std::fputs("\n", out);
        print_entry(out, c);
        print_sections(out, c.bit);
        return true;
    }
    return false;
}

void version(std::FILE* out) {
    (void)std::fputs(version_text, out);
}

}  // namespace resplock_cli
