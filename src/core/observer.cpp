// Observer: events for the application and CLIENT SETNAME on every connect. Its own object, so
// that a firmware without an Observer links none of it (a Connection reaches it through a
// function pointer the constructor sets). It drives the link through Connection's link API.
#include "resplock/core/observer.hpp"

namespace resplock {

using namespace std::string_view_literals;

namespace {

void no_event(void* /*user*/, const Event* /*event*/) noexcept {}

}  // namespace

Status Observer::on_connected(const Observer& self, Connection& conn, Deadline deadline) noexcept {
    Status named = Status::ok;  // the status the event carries
    if (self.client_name() != nullptr) {
        const std::string_view args[3] = {"CLIENT"sv, "SETNAME"sv, self.client_name()};
        // Straight on the new link (command() would check it and might reconnect).
        resp::Reply reply;
        named = conn.follow_up(args, 3, reply, deadline);
        // An error reply (an ACL without client|setname, a server that does not know the
        // command) leaves the link in step and usable: the name is a convenience, so the
        // connection goes on and the event says what happened. Anything else broke it.
        if (named != Status::ok && conn.error_text().empty()) return named;
    }
    const Event event{conn.note_link() ? RESPLOCK_EVENT_reconnect : RESPLOCK_EVENT_connect,
                      static_cast<resplock_status_t>(named),
                      0,
                      0,
                      nullptr,
                      0};
    self.report(event);
    return Status::ok;
}

Observer::Observer(EventFn on_event, void* user) noexcept
    : connected_(&on_connected),
      on_event_(on_event != nullptr ? on_event : &no_event),
      user_(user) {}

Status Observer::set_client_name(const char* name) noexcept {
    if (name != nullptr) {
        std::size_t n = 0;
        for (; name[n] != '\0'; ++n) {
            // Redis refuses spaces and newlines in a client name; the rest of printable ASCII
            // is accepted.
            if (n == max_client_name_len || name[n] < '!' || name[n] > '~') {
                return Status::invalid_argument;
            }
        }
        if (n == 0) return Status::invalid_argument;
    }
    client_name_ = name;
    return Status::ok;
}

}  // namespace resplock
