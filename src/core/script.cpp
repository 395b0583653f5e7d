#include "core/script.hpp"

namespace resplock::detail {

Status eval(Connection& conn, const Script& script, std::string_view* args, std::size_t count,
            resp::Reply& reply, Deadline deadline) noexcept {
    return eval_inline(conn, script, args, count, reply, deadline);
}

}  // namespace resplock::detail
