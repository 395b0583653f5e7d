#include "core/script.hpp"

namespace resplock::detail {

Status eval(Connection& conn, const Script& script, std::string_view* args, std::size_t count,
            resp::Reply& reply, Deadline deadline) noexcept {
    for (bool by_text = false;; by_text = true) {
        args[0] = {"EVALSHA", by_text ? 4U : 7U};  // EVAL is its prefix
        args[1] = by_text ? script.text : script.sha1;
        const Status s = conn.command(args, count, reply, deadline);
        // NOSCRIPT: the server's script cache is empty (restart, failover, SCRIPT FLUSH): send
        // the text once.
        if (s != Status::no_script || by_text) return s;
    }
}

}  // namespace resplock::detail
