// check_tls() and, with RESPLOCK_CLI_TLS, the TLS set-up: the certificate and key files read into
// static buffers, and the mbedTLS port over the POSIX one (see tls.hpp).
#include "tls.hpp"

#include "exit_codes.hpp"
#include "messages.hpp"
#ifdef RESPLOCK_CLI_TLS
#include <errno.h>

#include <cstddef>
#include <cstdio>
#include <cstring>
#include <string_view>
#endif

namespace resplock_cli {

int check_tls(const Options& o, const Endpoint& ep, const char* source) {
    const bool tls_options = o.cacert != nullptr || o.cert != nullptr || o.key != nullptr ||
                             o.tls_server_name != nullptr || o.insecure;
    if (tls_options && !ep.tls) {
        // Refused rather than ignored: the user expects TLS and would get plain text.
        report(
            "--cacert, --cert, --key, --tls-server-name and --%s need a rediss:// URL (%s is "
            "redis://)",
            insecure_flag, source);
        return exit_usage;
    }
#ifndef RESPLOCK_CLI_TLS
    if (ep.tls) {
        report("rediss:// (TLS) is not supported by this build");
        return exit_usage;
    }
#endif
    return -1;
}

#ifdef RESPLOCK_CLI_TLS
namespace {

// Certificates and keys as read from their files; PEM gets its NUL counted, as mbedTLS wants.
struct Blob {
    unsigned char* data;
    std::size_t cap;
    std::size_t len;
};
// Static storage: too large for the stack, and the tool allocates nothing.
// NOLINTBEGIN(cppcoreguidelines-avoid-non-const-global-variables)
unsigned char ca_file[256 * 1024 + 1];  // a whole system CA bundle fits
unsigned char cert_file[64 * 1024 + 1];
unsigned char key_file[64 * 1024 + 1];
// NOLINTEND(cppcoreguidelines-avoid-non-const-global-variables)

bool read_blob(const char* option, const char* path, Blob& blob) {
    std::FILE* f = std::fopen(path, "rb");
    if (f == nullptr) {
        report("cannot read --%s %s: %s", option, Masked(path).text, std::strerror(errno));
        return false;
    }
    const std::size_t n = std::fread(blob.data, 1, blob.cap - 1, f);
    const bool failed = std::ferror(f) != 0;
    const bool too_big = !failed && n == blob.cap - 1 && std::fgetc(f) != EOF;
    (void)std::fclose(f);
    if (failed || too_big || n == 0) {
        report("cannot read --%s %s: %s", option, Masked(path).text,
               failed    ? "read error"
               : too_big ? "larger than the limit"
                         : "empty file");
        return false;
    }
    blob.data[n] = '\0';
    const std::string_view text(reinterpret_cast<const char*>(blob.data), n);
    blob.len = text.find("-----BEGIN") != std::string_view::npos ? n + 1 : n;
    return true;
}

// The TLS options that must go together, and the warning --insecure-skip-tls-verify earns.
// Returns -1 to go on, else the exit code.
int check_tls_usage(const Options& o) {
    if (o.cacert == nullptr && !o.insecure) {
        report(
            "rediss:// needs --cacert FILE (the CA that signed the server's certificate), or "
            "--%s to skip verification",
            insecure_flag);
        return exit_usage;
    }
    if ((o.cert == nullptr) != (o.key == nullptr)) {
        report("--cert and --key go together (a client certificate and its private key)");
        return exit_usage;
    }
    if (o.insecure) {
        report(
            "warning: --%s: the server's certificate is NOT verified; anyone on the "
            "network path can impersonate the server and read the traffic",
            insecure_flag);
    }
    return -1;
}

// Reads the files of the TLS options into config. False (reported) if one cannot be read.
bool read_tls_files(const Options& o, resplock_mbedtls_config_t& config) {
    Blob ca{ca_file, sizeof ca_file, 0};
    Blob cert{cert_file, sizeof cert_file, 0};
    Blob key{key_file, sizeof key_file, 0};
    if (o.cacert != nullptr) {
        if (!read_blob("cacert", o.cacert, ca)) return false;
        config.ca = ca.data;
        config.ca_len = ca.len;
    }
    if (o.cert != nullptr) {
        if (!read_blob("cert", o.cert, cert) || !read_blob("key", o.key, key)) return false;
        config.cert = cert.data;
        config.cert_len = cert.len;
        config.key = key.data;
        config.key_len = key.len;
    }
    return true;
}

// Reports why the mbedTLS port refused its set-up (status s) and returns the exit code.
int tls_refused(const Options& o, resplock_status_t s, const resplock_mbedtls_t& tls) {
    char why[400];
    if (resplock_mbedtls_describe(&tls, why, sizeof why) == 0) {
        (void)std::snprintf(why, sizeof why, "%s", resplock_status_str(s));
    }
    const resplock_mbedtls_failure_t kind = resplock_mbedtls_failure(&tls);
    const char* file = kind == RESPLOCK_MBEDTLS_FAILURE_ca     ? o.cacert
                       : kind == RESPLOCK_MBEDTLS_FAILURE_cert ? o.cert
                       : kind == RESPLOCK_MBEDTLS_FAILURE_key  ? o.key
                                                               : nullptr;
    if (file != nullptr) {
        report("%s: %s", Masked(file).text, Masked(why).text);
    } else if (s == RESPLOCK_STATUS_invalid_argument) {
        report("TLS setup refused: %s (is --tls-server-name longer than %d characters?)",
               Masked(why).text, RESPLOCK_MBEDTLS_MAX_NAME);
    } else {
        report("%s", Masked(why).text);
    }
    return s == RESPLOCK_STATUS_invalid_argument ? exit_usage : exit_unavailable;
}

}  // namespace

int setup_tls(const Options& o, const resplock_port_t& inner, resplock_mbedtls_t& tls,
              resplock_port_t& out) {
    const int usage = check_tls_usage(o);
    return usage >= 0 ? usage : wrap_tls(o, inner, tls, out);
}

int wrap_tls(const Options& o, const resplock_port_t& inner, resplock_mbedtls_t& tls,
             resplock_port_t& out) {
    resplock_mbedtls_config_t config{};
    if (!read_tls_files(o, config)) return exit_usage;
    config.server_name = o.tls_server_name;
    config.insecure_skip_verify = o.insecure ? 1 : 0;
    config.inner = &inner;
    const resplock_status_t s = resplock_mbedtls_port_init(&tls, &config, &out);
    if (s == RESPLOCK_STATUS_ok) return -1;
    return tls_refused(o, s, tls);
}
#endif

}  // namespace resplock_cli
