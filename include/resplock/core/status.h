/* resplock status codes: the one status enum of the library, shared by the C and C++ APIs.
 * Each public function documents the subset it returns. */
#ifndef RESPLOCK_STATUS_H
#define RESPLOCK_STATUS_H

/* X(name, text): one line per status. The numeric value is the position in this list. */
#define RESPLOCK_STATUS_LIST(X)                                                 \
    X(ok, "ok")                                                                 \
    X(incomplete, "reply incomplete, more bytes needed")                        \
    X(protocol_error, "protocol error")                                         \
    X(too_large, "reply or command exceeds the buffer or a compile-time limit") \
    X(invalid_argument, "invalid argument")                                     \
    X(timeout, "timed out")                                                     \
    X(no_host, "host name not resolved")                                        \
    X(connect_failed, "connection refused or unreachable")                      \
    X(closed, "connection closed by the server")                                \
    X(io_error, "transport error")                                              \
    X(random_failed, "random source failed or missing")                         \
    X(unknown_outcome, "request sent but reply lost: outcome unknown")          \
    X(server_error, "server error reply")                                       \
    X(auth_required, "server requires authentication (NOAUTH)")                 \
    X(auth_failed, "authentication refused (WRONGPASS)")                        \
    X(no_permission, "command or key not permitted for this user (NOPERM)")     \
    X(no_script, "script not in the server's cache (NOSCRIPT)")                 \
    X(read_only, "server is a read-only replica (READONLY)")                    \
    X(loading, "server is loading its dataset (LOADING)")                       \
    X(server_busy, "server is running a script (BUSY)")                         \
    X(out_of_memory, "server is out of memory (OOM)")                           \
    X(wrong_type, "key holds a value of another type (WRONGTYPE)")              \
    X(busy, "lock is held by someone else")                                     \
    X(not_owner, "lock is held by someone else, not this token")                \
    X(expired, "lock has expired")                                              \
    X(too_many_redirects, "too many cluster redirections (MOVED/ASK)")          \
    X(not_replicated, "write not kept: too few replicas, or not the master")    \
    X(try_again, "cluster cannot serve the key now (CLUSTERDOWN, TRYAGAIN)")    \
    X(no_replicas, "write refused: too few good replicas (NOREPLICAS)")

#ifdef __cplusplus
extern "C" {
#endif

#define RESPLOCK_STATUS_C_ENUM(name, text) RESPLOCK_STATUS_##name,
typedef enum resplock_status { RESPLOCK_STATUS_LIST(RESPLOCK_STATUS_C_ENUM) } resplock_status_t;
#undef RESPLOCK_STATUS_C_ENUM

/* A fixed, human-readable description of a status; never NULL. */
const char* resplock_status_str(resplock_status_t status);

#ifdef __cplusplus
}
#endif

#endif /* RESPLOCK_STATUS_H */
