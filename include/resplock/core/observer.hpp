// What an application may observe of its connections and locks (events, for logs and metrics)
// and what a connection announces about itself to the server (CLIENT SETNAME). Optional: a
// Connection or Renewer without an Observer pays one null check for it. The functions of this
// class live in src/core/observer.cpp, linked only by a program that makes an Observer.
#ifndef RESPLOCK_OBSERVER_HPP
#define RESPLOCK_OBSERVER_HPP

#include <cstddef>

#include "resplock/core/connection.hpp"
#include "resplock/core/event.h"
#include "resplock/core/status.hpp"

namespace resplock {

// The kinds of event, with the values of resplock_event_kind_t (event.h, which says what each
// event carries).
#define RESPLOCK_EVENT_CPP_ENUM(name) name = RESPLOCK_EVENT_##name,
enum class EventKind : int { RESPLOCK_EVENT_LIST(RESPLOCK_EVENT_CPP_ENUM) };
#undef RESPLOCK_EVENT_CPP_ENUM

// One definition for C and C++: an event is the C struct.
using Event = resplock_event_t;
using EventFn = resplock_event_fn;
inline EventKind kind_of(const Event& event) noexcept {
    return static_cast<EventKind>(event.kind);
}
inline Status status_of(const Event& event) noexcept {
    return static_cast<Status>(event.status);
}

// Longest client name set_client_name() accepts.
inline constexpr std::size_t max_client_name_len = 64;

// Given to a ConnectionConfig (config.observer: connect, reconnect, and the retries of the locks
// over that connection) and to a Renewer (renewal, loss); one Observer may serve any number of
// them. It must outlive them; it is only read by them, so several connections used from several
// threads may share it if on_event may be called from those threads.
class Observer {
  public:
    // Reports every event to on_event(user, &event); null on_event: no events (e.g. an Observer
    // only for the client name).
    explicit Observer(EventFn on_event = nullptr, void* user = nullptr) noexcept;

    // Sends CLIENT SETNAME `name` right after AUTH / SELECT on every connect and reconnect of the
    // connections it observes, so the server's CLIENT LIST shows who is connected. `name` is
    // NUL-terminated, not copied, and must outlive the Observer; null: no name (the default).
    // Returns ok, or invalid_argument (empty, over max_client_name_len bytes, or a byte outside
    // '!'..'~': Redis refuses spaces and newlines in a name), leaving the name unchanged.
    // The name is a convenience: a server that refuses it (an error reply, e.g. NOPERM from an
    // ACL without client|setname) does not fail the connection; the connect or reconnect event
    // carries that status instead. A transport failure during it fails the connect as any other.
    Status set_client_name(const char* name) noexcept;
    const char* client_name() const noexcept { return client_name_; }

    // Reports `event` (does nothing without an event function).
    __attribute__((always_inline)) void report(const Event& event) const noexcept {
        on_event_(user_, &event);
    }

    // Called by a Connection after each successful connect and handshake: sends the client name,
    // if any, and reports connect (the connection's first) or reconnect. Returns ok (also when
    // the server refused the name), or the failure of the CLIENT SETNAME round trip (timeout,
    // closed, io_error, protocol_error, too_large): the Connection then closes the connection.
    Status connected(Connection& conn, Deadline deadline) const noexcept {
        return connected_(*this, conn, deadline);
    }

  private:
    static Status on_connected(const Observer& self, Connection& conn, Deadline deadline) noexcept;

    // &on_connected: a pointer, so that a Connection reaches it only when an Observer exists.
    Status (*connected_)(const Observer& self, Connection& conn, Deadline deadline) noexcept;
    EventFn on_event_;
    void* user_;
    const char* client_name_ = nullptr;
};

}  // namespace resplock

#endif  // RESPLOCK_OBSERVER_HPP
