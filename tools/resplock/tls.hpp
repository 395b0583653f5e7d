// TLS for the tool. check_tls(), in every build, decides whether an endpoint may use the TLS
// options and rediss:// at all. setup_tls(), only in a build with the mbedTLS port
// (RESPLOCK_CLI_TLS), reads the certificate and key files given and wraps the POSIX transport in
// TLS; without it, rediss:// is refused.
#ifndef RESPLOCK_TOOL_TLS_HPP
#define RESPLOCK_TOOL_TLS_HPP

#include "args.hpp"
#include "url.hpp"
#ifdef RESPLOCK_CLI_TLS
#include "resplock/core/port.h"
#include "resplock/ports/mbedtls.h"
#endif

namespace resplock_cli {

// TLS options (--cacert, --cert, --key, --tls-server-name, --insecure-skip-tls-verify) need a
// rediss:// URL, and a build without TLS refuses rediss://. `source` names where the URL came
// from. Returns -1 when ep may be used, else the exit code, having reported why.
int check_tls(const Options& o, const Endpoint& ep, const char* source);

#ifdef RESPLOCK_CLI_TLS
// Reads the TLS files of o and wraps `inner` in tls, giving the port to use in out (which may be
// `inner` itself). Returns -1 on success, else the exit code, having reported why.
int setup_tls(const Options& o, const resplock_port_t& inner, resplock_mbedtls_t& tls,
              resplock_port_t& out);
// setup_tls() without its checks of the options and their warnings, for a further transport of
// one command (a Sentinel's link to a sentinel) once setup_tls() passed.
int wrap_tls(const Options& o, const resplock_port_t& inner, resplock_mbedtls_t& tls,
             resplock_port_t& out);
#endif

}  // namespace resplock_cli

#endif  // RESPLOCK_TOOL_TLS_HPP
