// The --help and --version texts (see usage.hpp). The help text is one constant, so that the
// build's TLS support is written into it once, at compile time.
#include "usage.hpp"

#include "resplock/core/config.h"
#include "resplock/version.h"

namespace resplock_cli {

namespace {

#define RESPLOCK_CLI_TEXT(x) #x
#define RESPLOCK_CLI_NUMBER(x) RESPLOCK_CLI_TEXT(x)

constexpr const char usage_text[] =
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
    "  status KEY               print \"held <remaining-ms>\" or \"free\"; a holder whose\n"
    "                           token carries an owner label: \"held <remaining-ms> <label>\"\n"
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
    "      --owner LABEL        acquire/run: tokens are LABEL:<random hex>, so that\n"
    "                           'redis-cli GET KEY' and status show who holds the lock;\n"
    "                           up to " RESPLOCK_CLI_NUMBER(RESPLOCK_MAX_OWNER_LEN) " characters of A-Z a-z 0-9 . _ - ('' for none);\n"
    "                           also the client name (CLIENT SETNAME) on every connection\n"
    "                           default: the host name, other characters made '-', cut\n"
    "                           to " RESPLOCK_CLI_NUMBER(RESPLOCK_MAX_OWNER_LEN) "\n"
    "      --no-client-name     do not send CLIENT SETNAME (a server that refuses it is\n"
    "                           no error either way)\n"
    "One server only (not with several URLs):\n"
    "      --fence              acquire/run: also take a fencing number, strictly increasing\n"
    "                           per KEY (counter KEY:fence); give it to the resource you\n"
    "                           protect so that it can refuse a holder whose lock expired\n"
    "      --once-per MS        acquire/run: at most once per MS by anyone: busy (75) until\n"
    "                           MS have passed since the last acquisition, even if it was\n"
    "                           released early (marker KEY:once, on the server's clock)\n"
    "      --wake               wait by blocking on KEY:wake (BLPOP) instead of polling, and\n"
    "                           wake a waiter on release; every party should use it\n"
    "      --fair               first come, first served: waiters queue in arrival order\n"
    "                           and release hands the lock to the first live one (queue\n"
    "                           {KEY}:q, or KEY:q when KEY has a {hash tag}); for acquire,\n"
    "                           run, release (hands over); not with --fence, --once-per,\n"
    "                           --wake, --owner (fair tokens carry no label)\n"
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
    "  resplock release deploy \"$token\"\n";

constexpr const char version_text[] = "resplock " RESPLOCK_VERSION "\n";

}  // namespace

void usage(std::FILE* out) {
    (void)std::fputs(usage_text, out);
}

void version(std::FILE* out) {
    (void)std::fputs(version_text, out);
}

}  // namespace resplock_cli
