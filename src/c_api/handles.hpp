// The C API's views of its opaque handles as the C++ objects inside them. Internal.
#ifndef RESPLOCK_HANDLES_HPP
#define RESPLOCK_HANDLES_HPP

#include <new>

#include "resplock/c_api/lock.h"
#include "resplock/core/lock.hpp"

namespace resplock::c_api {

// Whether a handle's opaque storage can hold a T: large enough, aligned enough.
template <class T, class Handle>
constexpr bool storage_fits() noexcept {
    return sizeof(T) <= sizeof(Handle) && alignof(T) <= alignof(Handle);
}
// Whether it holds no more than a T rounded up to the handle's alignment: the header's formula
// (RESPLOCK_*_STORAGE, from config.h's limits) follows the class's members, no spare.
template <class T, class Handle>
constexpr bool storage_tight() noexcept {
    return sizeof(Handle) >= sizeof(T) && sizeof(Handle) - sizeof(T) < alignof(Handle);
}

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
