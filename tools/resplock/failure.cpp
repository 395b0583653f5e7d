// describe(), exit_for() and fail() (see failure.hpp).
#include "failure.hpp"

#include <cstdio>
#include <cstring>
#include <string_view>

#include "exit_codes.hpp"
#include "messages.hpp"
#include "routing.hpp"
#include "text.hpp"

namespace resplock_cli {

using resplock::Status;

namespace {

constexpr std::size_t server_text_max = 200;  // characters of a server error message shown

// Redis 7.0 answers a command that the lock's script calls but the user's ACL lacks with a plain
// "ERR The user executing the script can't run this command ...": a permission problem.
bool refused_in_script(Status s, const Target& t) {
    return s == Status::server_error && t.conn != nullptr &&
           t.conn->error_text().find("The user executing the script can't run") !=
               std::string_view::npos;
}

// A server that requires a client certificate ends the handshake when it gets none.
constexpr char client_cert_hint[] =
    "; if the server requires a client certificate, give --cert and --key";
// The longest text describe() writes is a TLS failure: its description, the target and the hint.
static_assert(sizeof(Masked::text) + sizeof(Target::where) + sizeof " (TLS with )" +
                      sizeof client_cert_hint <=
                  why_max,
              "why_max must hold a TLS failure's whole text");

// Why a TLS connection failed, when that is the reason for s. True if it wrote out.
bool describe_tls(Status s, const Target& t, char* out, std::size_t cap) {
#ifdef RESPLOCK_CLI_TLS
    if (t.tls == nullptr) return false;
    if (s != Status::io_error && s != Status::closed && s != Status::unknown_outcome) return false;
    char text[400];
    if (resplock_mbedtls_describe(t.tls, text, sizeof text) == 0) return false;
    const bool hint =
        !t.client_cert && resplock_mbedtls_failure(t.tls) == RESPLOCK_MBEDTLS_FAILURE_handshake;
    (void)std::snprintf(out, cap, "%s (TLS with %s)%s", Masked(text).text, t.where,
                        hint ? client_cert_hint : "");
    return true;
#else
    (void)s;
    (void)t;
    (void)out;
    (void)cap;
#endif
    return false;
}

bool is_error_reply(Status s) {
    switch (s) {
        case Status::server_error:
        case Status::auth_required:
        case Status::auth_failed:
        case Status::no_permission:
        case Status::no_script:
        case Status::read_only:
        case Status::loading:
        case Status::server_busy:
        case Status::out_of_memory:
        case Status::wrong_type:
        case Status::try_again:
        case Status::no_replicas:
            return true;
        default:
            return false;
    }
}

// The text of the error reply the connection received last, cut to server_text_max (and masked,
// should it echo a URL).
void server_text(const resplock::Connection& conn, char* out, std::size_t cap) {
    const std::string_view text = conn.error_text();
    const bool cut = text.size() > server_text_max;
    const Masked shown(slice(text, 0, cut ? server_text_max : text.size()));
    (void)std::snprintf(out, cap, "%.*s%s", static_cast<int>(server_text_max), shown.text,
                        cut ? "..." : "");
}

// The failures that are not an error reply of the server. True if it wrote out.
bool describe_link(Status s, const Target& t, char* out, std::size_t cap) {
    switch (s) {
        case Status::timeout:
            (void)std::snprintf(out, cap, "timed out after %u ms talking to %s", t.timeout_ms,
                                t.where);
            return true;
        case Status::no_host:
            (void)std::snprintf(out, cap, "cannot resolve host name %s", t.host);
            return true;
        case Status::connect_failed:
            (void)std::snprintf(out, cap, "cannot connect to %s: connection refused or unreachable",
                                t.where);
            return true;
        case Status::closed:
            (void)std::snprintf(out, cap, "connection closed by the server at %s", t.where);
            return true;
        case Status::io_error:
            (void)std::snprintf(out, cap, "transport error talking to %s", t.where);
            return true;
        case Status::unknown_outcome:
            (void)std::snprintf(out, cap,
                                "request sent to %s but its reply was lost (timed out after %u ms "
                                "or connection lost): outcome unknown",
                                t.where, t.timeout_ms);
            return true;
        case Status::incomplete:
        case Status::protocol_error:
            (void)std::snprintf(
                out, cap, "protocol error: malformed or unexpected reply from %s%s", t.where,
                request_may_have_gone(t) ? ""
                                         : " while setting up the connection (request not sent)");
            return true;
        case Status::not_replicated: {
            char node[max_host_len + 16];
            if (t.conn != nullptr) {
                last_node(*t.conn, t.where, node, sizeof node);
            } else {
                (void)std::snprintf(node, sizeof node, "%s", t.where);
            }
            const std::uint32_t acked = t.acknowledged != nullptr ? t.acknowledged(t.waiter) : 0U;
            if (t.replicas != 0 && acked < t.replicas) {
                (void)std::snprintf(out, cap,
                                    "only %u of %u replicas acknowledged the write on %s in time "
                                    "(WAIT)",
                                    acked, t.replicas, node);
            } else if (t.sentinel != nullptr && !t.sentinel->master_moved()) {
                (void)std::snprintf(out, cap,
                                    "only %zu of %zu sentinels confirmed %s, which took the "
                                    "write, as the master (more than half must)",
                                    t.sentinel->confirmations(), t.sentinel->count(), node);
            } else {
                (void)std::snprintf(out, cap,
                                    "%s, which took the write, is no longer the master the "
                                    "sentinels name (a failover): the write will not last",
                                    node);
            }
            return true;
        }
        case Status::too_large:
            if (!request_may_have_gone(t)) {
                (void)std::snprintf(out, cap,
                                    "protocol error: request not sent to %s: it, or a reply while "
                                    "setting up the connection, exceeds the %zu-byte buffer or a "
                                    "parser limit",
                                    t.where, t.buffer_size);
                return true;
            }
            (void)std::snprintf(out, cap,
                                "protocol error: reply from %s exceeds the %zu-byte buffer or a "
                                "parser limit",
                                t.where, t.buffer_size);
            return true;
        case Status::too_many_redirects: {
            char last[server_text_max + 8] = "";
            if (t.conn != nullptr) server_text(*t.conn, last, sizeof last);
            (void)std::snprintf(out, cap,
                                "Redis Cluster reached through %s kept redirecting: more than %d "
                                "MOVED/ASK replies for one request (slots migrating, or a "
                                "misconfigured node)%s%s",
                                t.where, RESPLOCK_MAX_REDIRECTS, last[0] != '\0' ? "; last: " : "",
                                last);
            return true;
        }
        default:
            return false;
    }
}

// "h:p, [v6]:p, ..." of the first `count` sentinels of s.
void sentinel_list(const resplock::Sentinel& s, std::size_t count, char* out, std::size_t cap) {
    std::size_t used = 0;
    out[0] = '\0';
    for (std::size_t i = 0; i < count && used < cap; ++i) {
        const resplock::Node& n = s.sentinel(i);
        const bool v6 = std::strchr(n.host, ':') != nullptr;
        const int w = std::snprintf(out + used, cap - used, v6 ? "%s[%s]:%u" : "%s%s:%u",
                                    i == 0 ? "" : ", ", n.host, static_cast<unsigned>(n.port));
        if (w < 0) return;
        used += static_cast<std::size_t>(w);
    }
}

// A master found through Sentinel: the name unknown, no sentinel reachable, or no node confirmed
// as master. True if it wrote out.
bool describe_sentinel(Status s, const Target& t, char* out, std::size_t cap) {
    if (t.sentinel == nullptr) return false;
    const resplock::Sentinel& r = *t.sentinel;
    char list[RESPLOCK_MAX_SENTINELS * (RESPLOCK_MAX_HOST_LEN + 10)];
    const Masked name(r.master_name());
    if (s == Status::no_host && r.name_unknown()) {
        sentinel_list(r, r.tried(), list, sizeof list);
        (void)std::snprintf(out, cap, "master name '%s' is unknown to the sentinels (%s)",
                            name.text, list);
        return true;
    }
    if ((s == Status::connect_failed || s == Status::timeout) && !r.resolved()) {
        sentinel_list(r, r.tried() != 0 ? r.tried() : r.count(), list, sizeof list);
        (void)std::snprintf(out, cap, "no sentinel reachable for master '%s' (tried %s)", name.text,
                            list);
        return true;
    }
    if (s == Status::read_only && t.conn != nullptr && t.conn->error_text().empty()) {
        (void)std::snprintf(out, cap,
                            "no node confirmed as master '%s' before the timeout (the sentinels "
                            "name a replica: a failover in progress?)",
                            name.text);
        return true;
    }
    return false;
}

}  // namespace

bool request_may_have_gone(const Target& t) {
    if (t.conn != nullptr) return t.conn->request_sent();
    return t.set_ups == nullptr || t.set_ups->load() != 0;
}

int exit_for(Status s, const Target& t) {
    if (refused_in_script(s, t)) return exit_denied;
#ifdef RESPLOCK_CLI_TLS
    if (t.tls != nullptr && resplock_mbedtls_failure(t.tls) == RESPLOCK_MBEDTLS_FAILURE_verify &&
        (s == Status::io_error || s == Status::unknown_outcome)) {
        return exit_denied;
    }
#endif
    return exit_code(s);
}

void describe(Status s, const Target& t, char* out, std::size_t cap) {
    if (describe_sentinel(s, t, out, cap) || describe_tls(s, t, out, cap) ||
        describe_link(s, t, out, cap)) {
        return;
    }
    if (s == Status::random_failed) {
        (void)std::snprintf(out, cap,
                            "cannot make a lock token: the system's random source failed");
        return;
    }
    if (s == Status::invalid_argument) {
        (void)std::snprintf(out, cap, "invalid argument (key, token or TTL refused)");
        return;
    }
    if (is_error_reply(s)) {
        char text[server_text_max + 8] = "";
        if (t.conn != nullptr) server_text(*t.conn, text, sizeof text);
        const Status shown = refused_in_script(s, t) ? Status::no_permission : s;
        (void)std::snprintf(out, cap, "%s from %s%s%s", resplock::to_string(shown), t.where,
                            text[0] != '\0' ? ": " : "", text);
        return;
    }
    (void)std::snprintf(out, cap, "%s", resplock::to_string(s));
}

int fail(Status s, const char* command, const char* key, const Target& t) {
    char why[why_max];
    describe(s, t, why, sizeof why);
    report("%s %s: %s", command, key, why);
    return exit_for(s, t);
}

}  // namespace resplock_cli
