// The command line: Options (what the user asked for) and parse_args(), which reads argv into
// them: options before or after the command, "--opt value", "--opt=value", "-u URL" and "-uURL"
// (the same for -w, -E and -c: "-w 2.5", "-w2.5"), flags that take no value (-n and -h stand
// alone: short options are not bundled, "-nE 3" is refused), "--" (ends the options; right after
// run's KEY it starts COMMAND), the command and its operands, and the checks on numbers, KEY and
// TOKEN. complete_options() then adds the servers of REDIS_URL or the default, and checks options
// against the command.
#ifndef RESPLOCK_TOOL_ARGS_HPP
#define RESPLOCK_TOOL_ARGS_HPP

#include <cstdint>
#include <string_view>

#include "exit_codes.hpp"
#include "messages.hpp"
#include "resplock/core/config.h"

namespace resplock_cli {

constexpr const char default_url[] = "redis://127.0.0.1:6379";
constexpr const char insecure_flag[] = "insecure-skip-tls-verify";

enum class Command { none, acquire, release, extend, status, run, list };

struct Options {
    std::string_view urls[RESPLOCK_MAX_SERVERS];  // --url, each given or comma-separated
    int url_count = 0;
    const char* url_source = "--url";  // where urls came from, for messages: or "REDIS_URL"
    const char* password_file = nullptr;
    const char* cacert = nullptr;  // TLS: --cacert, --cert, --key, --tls-server-name
    const char* cert = nullptr;
    const char* key = nullptr;
    const char* tls_server_name = nullptr;
    bool insecure = false;  // --insecure-skip-tls-verify
    std::uint32_t ttl_ms = 30000;
    std::uint32_t wait_ms = 0;
    // Which option set wait_ms: "--wait", "-w/--wait-seconds" or "-n/--nonblock" (null: none);
    // one of them only.
    const char* wait_option = nullptr;
    // -E/--conflict-exit-code CODE: acquire/run's exit status when the lock is busy (0..255)
    int busy_exit = exit_busy;
    bool busy_exit_given = false;
    std::uint32_t timeout_ms = 2000;
    bool fence = false;             // --fence
    std::uint32_t once_per_ms = 0;  // --once-per
    bool wake = false;              // --wake
    bool fair = false;              // --fair: resplock::FairLock (a FIFO queue, hand-off)
    std::uint32_t replicas = 0;     // --replicas N: WAIT for N replicas after acquire / extend
    // --limit N: resplock::Semaphore on KEY, at most N holders at once (fair with --fair); 0: a
    // lock
    std::uint32_t limit = 0;
    // --owner LABEL: the label before each token and the client name; empty: none. Without
    // --owner, default_owner() puts the host name here.
    char owner[RESPLOCK_MAX_OWNER_LEN + 1] = {};
    bool owner_given = false;
    bool client_name = true;  // false: --no-client-name
    Command command = Command::none;
    const char* command_name = "";
    const char* operands[3] = {};  // KEY [TOKEN]: positionals after the command
    int operand_count = 0;
    char** run_argv = nullptr;            // run: COMMAND [ARGS...], a tail of argv
    const char* shell_command = nullptr;  // run -c CMD: /bin/sh -c CMD instead of COMMAND
    Masked key_shown{""};                 // KEY as messages show it
    bool help_command = false;            // `resplock help [TOPIC]`
    const char* help_topic = nullptr;
    bool json = false;         // --json: status and list print JSON objects, one a line
    bool verbose = false;      // --verbose: status prints every field, one a line
    std::uint32_t max = 1000;  // --max N: list shows at most N locks
    bool max_given = false;
};

// Reads argv[1..argc) into o (which keeps pointers into argv). Returns -1 to go on, else the exit
// code: 64 after a usage error (reported), 0 after --help, `help [COMMAND]` or --version (printed
// on stdout; 74 if stdout cannot be written). --help after a command shows that command's help.
int parse_args(int argc, char** argv, Options& o);

// After parse_args: without --url, the servers of `redis_url` (REDIS_URL's value; null or empty:
// the default URL); then the options that apply to some commands only. Returns -1 to go on, else
// the exit code, having reported why.
int complete_options(Options& o, const char* redis_url);

// Without --owner: the owner label made of `host_name` (e.g. gethostname()'s; null: none), each
// byte outside A-Z a-z 0-9 . _ - replaced by '-', cut to RESPLOCK_MAX_OWNER_LEN bytes.
void default_owner(Options& o, const char* host_name);

}  // namespace resplock_cli

#endif  // RESPLOCK_TOOL_ARGS_HPP
