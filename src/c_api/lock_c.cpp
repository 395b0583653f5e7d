// The C API: thin wrappers that build the C++ objects inside the caller's opaque storage.
#include "resplock/c_api/lock.h"

#include "c_api/handles.hpp"
#include "resplock/c_api/observer.h"
#include "resplock/core/observer.hpp"

using resplock::Connection;
using resplock::Lock;
using resplock::Status;

static_assert(resplock::c_api::storage_fits<Connection, resplock_conn_t>(),
              "RESPLOCK_CONN_STORAGE is too small for this target");
static_assert(resplock::c_api::storage_tight<Connection, resplock_conn_t>(),
              "RESPLOCK_CONN_STORAGE is larger than needed: its formula drifted from the class");
static_assert(resplock::c_api::storage_fits<Lock, resplock_lock_t>(),
              "RESPLOCK_LOCK_STORAGE is too small for this target");
static_assert(resplock::c_api::storage_tight<Lock, resplock_lock_t>(),
              "RESPLOCK_LOCK_STORAGE is larger than needed: its formula drifted from the class");
static_assert(RESPLOCK_MAX_TTL_MS == resplock::max_ttl_ms, "one TTL limit");
static_assert(RESPLOCK_MAX_TOKEN_LEN == resplock::max_token_len, "one token limit");
static_assert(static_cast<int>(resplock::LockState::held_by_me) == RESPLOCK_LOCK_HELD_BY_ME &&
                  static_cast<int>(resplock::LockState::held_by_other) ==
                      RESPLOCK_LOCK_HELD_BY_OTHER,
              "lock states match");

namespace {

using resplock::c_api::c_status;

Connection& conn_of(resplock_conn_t* conn) {
    return resplock::c_api::object<Connection>(conn);
}
Lock& lock_of(resplock_lock_t* lock) {
    return resplock::c_api::object<Lock>(lock);
}
const Lock& lock_of(const resplock_lock_t* lock) {
    return resplock::c_api::object<Lock>(lock);
}

}  // namespace

extern "C" {

size_t resplock_lock_buffer_min(void) {
    return resplock::lock_buffer_min();
}

void resplock_conn_config_init(resplock_conn_config_t* config) {
    if (config == nullptr) return;
    const resplock::ConnectionConfig defaults;
    *config = {defaults.host, defaults.port,       defaults.username, defaults.password,
               defaults.db,   defaults.timeout_ms, nullptr,           nullptr};
}

resplock_status_t resplock_conn_init(resplock_conn_t* conn, const resplock_port_t* port,
                                     const resplock_conn_config_t* config, char* buffer,
                                     size_t buffer_size) {
    if (conn == nullptr || port == nullptr || config == nullptr || buffer == nullptr ||
        config->host == nullptr || port->connect == nullptr || port->send == nullptr ||
        port->recv == nullptr || port->close == nullptr || port->now_ms == nullptr ||
        port->sleep_ms == nullptr || buffer_size < resplock::lock_buffer_min()) {
        return RESPLOCK_STATUS_invalid_argument;
    }
    resplock::ConnectionConfig c;
    c.host = config->host;
    c.port = config->port;
    c.username = config->username;
    c.password = config->password;
    c.db = config->db;
    c.timeout_ms = config->timeout_ms;
    if (config->observer != nullptr) {
        c.observer = &resplock::c_api::object<resplock::Observer>(config->observer);
    }
    // The router's own init function stored its Router here (resplock/c_api/cluster.h, ...).
    c.router = reinterpret_cast<resplock::Router*>(config->router);
    new (conn->opaque.bytes) Connection(*port, c, buffer, buffer_size);
    return RESPLOCK_STATUS_ok;
}

resplock_status_t resplock_conn_connect(resplock_conn_t* conn) {
    if (conn == nullptr) return RESPLOCK_STATUS_invalid_argument;
    Connection& c = conn_of(conn);
    return c_status(c.connect(resplock::Deadline::after(c.port(), c.config().timeout_ms)));
}

const char* resplock_conn_error_text(resplock_conn_t* conn) {
    const std::string_view text = conn == nullptr ? std::string_view() : conn_of(conn).error_text();
    if (text.empty()) return "";
    // The text is a view into the caller's buffer, followed there by the CR LF that ended the
    // reply: ending it with a NUL in place needs no storage and changes nothing the connection
    // reads (the next request overwrites the buffer).
    char* end = const_cast<char*>(text.data()) + text.size();  // NOLINT: the caller's buffer
    *end = '\0';
    return text.data();
}

void resplock_conn_deinit(resplock_conn_t* conn) {
    if (conn != nullptr) conn_of(conn).~Connection();
}

resplock_status_t resplock_lock_init(resplock_lock_t* lock, resplock_conn_t* conn, const char* key,
                                     size_t key_len) {
    if (lock == nullptr || conn == nullptr || key == nullptr || key_len == 0 ||
        key_len > RESPLOCK_MAX_KEY_LEN) {
        return RESPLOCK_STATUS_invalid_argument;
    }
    new (lock->opaque.bytes) Lock(conn_of(conn), {key, key_len});
    return RESPLOCK_STATUS_ok;
}

resplock_status_t resplock_lock_acquire(resplock_lock_t* lock, uint32_t ttl_ms) {
    if (lock == nullptr) return RESPLOCK_STATUS_invalid_argument;
    return c_status(lock_of(lock).acquire(ttl_ms));
}

resplock_status_t resplock_lock_try_acquire(resplock_lock_t* lock, uint32_t ttl_ms,
                                            uint32_t wait_ms) {
    if (lock == nullptr) return RESPLOCK_STATUS_invalid_argument;
    return c_status(lock_of(lock).try_acquire(ttl_ms, wait_ms));
}

resplock_status_t resplock_lock_release(resplock_lock_t* lock) {
    if (lock == nullptr) return RESPLOCK_STATUS_invalid_argument;
    return c_status(lock_of(lock).release());
}

resplock_status_t resplock_lock_extend(resplock_lock_t* lock, uint32_t ttl_ms) {
    if (lock == nullptr) return RESPLOCK_STATUS_invalid_argument;
    return c_status(lock_of(lock).extend(ttl_ms));
}

resplock_status_t resplock_lock_query(resplock_lock_t* lock, resplock_lock_info_t* info) {
    if (lock == nullptr || info == nullptr) return RESPLOCK_STATUS_invalid_argument;
    resplock::LockInfo i;
    const Status s = lock_of(lock).query(i);
    if (s == Status::ok) {
        info->state = static_cast<resplock_lock_state_t>(i.state);
        info->ttl_ms = i.ttl_ms;
    }
    return c_status(s);
}

uint32_t resplock_lock_remaining_ms(const resplock_lock_t* lock) {
    return lock == nullptr ? 0U : lock_of(lock).remaining_ms();
}

const char* resplock_lock_token(const resplock_lock_t* lock, size_t* len) {
    const std::string_view t = lock == nullptr ? std::string_view() : lock_of(lock).token();
    if (len != nullptr) *len = t.size();
    return t.empty() ? nullptr : t.data();
}

resplock_status_t resplock_lock_adopt(resplock_lock_t* lock, const char* token, size_t len) {
    if (lock == nullptr || token == nullptr) return RESPLOCK_STATUS_invalid_argument;
    return c_status(lock_of(lock).adopt({token, len}));
}

}  // extern "C"
