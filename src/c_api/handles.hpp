// The C API's views of its opaque handles as the C++ objects inside them. Internal.
#ifndef RESPLOCK_HANDLES_HPP
#define RESPLOCK_HANDLES_HPP

#include <new>

#include "resplock/c_api/lock.h"
#include "resplock/core/lock.hpp"

namespace resplock::c_api {

// The C++ object of type T that the C API built inside a handle's opaque storage.
template <class T, class Handle>
T& object(Handle* handle) noexcept {
    return *std::launder(reinterpret_cast<T*>(handle->opaque.bytes));
}
template <class T, class Handle>
const T& object(const Handle* handle) noexcept {
    return *std::launder(reinterpret_cast<const T*>(handle->opaque.bytes));
}

inline resplock_status_t c_status(Status s) noexcept {
    return static_cast<resplock_status_t>(s);
}

}  // namespace resplock::c_api

#endif  // RESPLOCK_HANDLES_HPP
