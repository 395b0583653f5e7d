// LockRef: a reference to a lock of any kind, for code that keeps a lock alive or gives it back
// without knowing its type (the Renewer; the resplock tool's `run`). Type erasure without virtual
// functions and without heap: one constant table of plain functions per lock type, made by
// LockRef::to(lock). A LockRef does not own the lock, which must outlive its use; copying it
// copies the reference.
//
// resplock::Lock, FairLock, QuorumLock and ReentrantLock offer everything below. Any other type
// with extend(), remaining_ms() and token() will do (e.g. a wrapper that adds to what a lock kind
// does); release(), key() and close() are optional, with the fallbacks below.
#ifndef RESPLOCK_LOCK_REF_HPP
#define RESPLOCK_LOCK_REF_HPP

#include <cstdint>
#include <string_view>

#include "resplock/core/status.hpp"

namespace resplock {

class LockRef {
  public:
    // Refers to no lock: object() is null, and no other member may be called.
    constexpr LockRef() noexcept = default;

    // A reference to `lock`. L has
    //   Status extend(std::uint32_t ttl_ms, std::uint32_t wait_ms)
    //   std::uint32_t remaining_ms() const
    //   std::string_view token() const
    // and may have
    //   Status release()                 (without it, release() returns invalid_argument)
    //   std::string_view key() const     (without it, key() is empty)
    //   void close(), or connection() whose close() closes the lock's sockets (without either,
    //   close() does nothing).
    template <class L>
    static LockRef to(L& lock) noexcept {
        return LockRef(&lock, ops_for<L>);
    }

    // The lock referred to (the object given to to()), or null.
    void* object() const noexcept { return lock_; }

    // Renews the lock for ttl_ms, waiting up to wait_ms for the reply: L::extend.
    Status extend(std::uint32_t ttl_ms, std::uint32_t wait_ms) const noexcept {
        return ops_->extend(lock_, ttl_ms, wait_ms);
    }
    // Gives the lock back (owner-checked): L::release.
    Status release() const noexcept { return ops_->release(lock_); }
    // Validity left, in ms: L::remaining_ms.
    std::uint32_t remaining_ms() const noexcept { return ops_->remaining_ms(lock_); }
    // The token of the current hold, empty when there is none: L::token.
    std::string_view token() const noexcept { return ops_->token(lock_); }
    // The lock's key: L::key, or empty.
    std::string_view key() const noexcept { return ops_->key(lock_); }
    // Closes the lock's sockets without a request (e.g. a forked child's copies of them; the next
    // call reconnects): L::close, or L::connection().close().
    void close() const noexcept { ops_->close(lock_); }

  private:
    struct Ops {
        Status (*extend)(void* lock, std::uint32_t ttl_ms, std::uint32_t wait_ms) noexcept;
        Status (*release)(void* lock) noexcept;
        std::uint32_t (*remaining_ms)(const void* lock) noexcept;
        std::string_view (*token)(const void* lock) noexcept;
        std::string_view (*key)(const void* lock) noexcept;
        void (*close)(void* lock) noexcept;
    };

    constexpr LockRef(void* lock, const Ops& ops) noexcept : lock_(lock), ops_(&ops) {}

    template <class L>
    static Status extend_of(void* lock, std::uint32_t ttl_ms, std::uint32_t wait_ms) noexcept {
        return static_cast<L*>(lock)->extend(ttl_ms, wait_ms);
    }
    template <class L>
    static std::uint32_t remaining_of(const void* lock) noexcept {
        return static_cast<const L*>(lock)->remaining_ms();
    }
    template <class L>
    static std::string_view token_of(const void* lock) noexcept {
        return static_cast<const L*>(lock)->token();
    }

    // The optional members: the first overload whose expression is valid for L (int before long
    // before the ellipsis).
    template <class L>
    static auto release_of(L& lock, int) noexcept -> decltype(lock.release()) {
        return lock.release();
    }
    template <class L>
    static Status release_of(L& /*lock*/, ...) noexcept {
        return Status::invalid_argument;
    }
    template <class L>
    static auto key_of(const L& lock, int) noexcept -> decltype(std::string_view(lock.key())) {
        return lock.key();
    }
    template <class L>
    static std::string_view key_of(const L& /*lock*/, ...) noexcept {
        return {};
    }
    template <class L>
    static auto close_of(L& lock, int) noexcept -> decltype(lock.close()) {
        lock.close();
    }
    template <class L>
    static auto close_of(L& lock, long) noexcept -> decltype(lock.connection().close()) {
        lock.connection().close();
    }
    template <class L>
    static void close_of(L& /*lock*/, ...) noexcept {}

    template <class L>
    static Status release_any(void* lock) noexcept {
        return release_of(*static_cast<L*>(lock), 0);
    }
    template <class L>
    static std::string_view key_any(const void* lock) noexcept {
        return key_of(*static_cast<const L*>(lock), 0);
    }
    template <class L>
    static void close_any(void* lock) noexcept {
        close_of(*static_cast<L*>(lock), 0);
    }

    template <class L>
    static constexpr Ops ops_for = {&extend_of<L>, &release_any<L>, &remaining_of<L>,
                                    &token_of<L>,  &key_any<L>,     &close_any<L>};

    void* lock_ = nullptr;
    const Ops* ops_ = nullptr;
};

}  // namespace resplock

#endif  // RESPLOCK_LOCK_REF_HPP
