// The library's status enum for C++: the same values as resplock_status_t (status.h).
#ifndef RESPLOCK_STATUS_HPP
#define RESPLOCK_STATUS_HPP

#include "resplock/core/status.h"

namespace resplock {

#define RESPLOCK_STATUS_CPP_ENUM(name, text) name = RESPLOCK_STATUS_##name,
enum class Status : int { RESPLOCK_STATUS_LIST(RESPLOCK_STATUS_CPP_ENUM) };
#undef RESPLOCK_STATUS_CPP_ENUM

// A fixed, human-readable description of `status`; never null.
inline const char* to_string(Status status) noexcept {
    return resplock_status_str(static_cast<resplock_status_t>(status));
}

}  // namespace resplock

#endif  // RESPLOCK_STATUS_HPP
