// resplock: the command-line tool. Takes, releases, extends and inspects one lock on a Redis
// server, and runs a command while holding one, renewing it until the command ends. Exit codes
// follow sysexits(3) so that shell scripts can tell "busy" from "server down" (exit_codes.hpp).
// The work is done by the units beside this file: args (the command line), url (the servers),
// commands (each command), supervisor and guardian (run), tls, failure, messages, exit_codes,
// usage and text.
#include "commands.hpp"

int main(int argc, char** argv) {
    return resplock_cli::run(argc, argv);
}
