// LockRef: each call reaches the member of the lock it refers to, and the optional members fall
// back as lock_ref.hpp says: no release() gives invalid_argument, no key() an empty key, close()
// prefers L::close() to L::connection().close() and does nothing without either. The real lock
// kinds are checked to offer every member.
#include <cstdint>
#include <string_view>

#include "check.hpp"
#include "resplock/core/lock.hpp"
#include "resplock/ports/mock.hpp"
#include "resplock/variants/fair_lock.hpp"
#include "resplock/variants/lock_ref.hpp"
#include "resplock/variants/quorum_lock.hpp"
#include "resplock/variants/reentrant_lock.hpp"
#include "resplock/variants/semaphore.hpp"

using resplock::LockRef;
using resplock::Status;

namespace {

// The least a LockRef needs.
struct Bare {
    std::uint32_t extended_ttl = 0;
    std::uint32_t extended_wait = 0;
    Status extend(std::uint32_t ttl_ms, std::uint32_t wait_ms) noexcept {
        extended_ttl = ttl_ms;
        extended_wait = wait_ms;
        return Status::not_owner;
    }
    std::uint32_t remaining_ms() const noexcept { return 42; }
    std::string_view token() const noexcept { return "tok"; }
};

struct Conn {
    int closed = 0;
    void close() noexcept { ++closed; }
};

// Every optional member, and a connection() beside close(): close() must win.
struct Full : Bare {
    int released = 0;
    int closed = 0;
    mutable Conn conn;
    Status release() noexcept {
        ++released;
        return Status::expired;
    }
    std::string_view key() const noexcept { return "job"; }
    void close() noexcept { ++closed; }
    Conn& connection() const noexcept { return conn; }
};

// Only a connection(): close() closes it.
struct ViaConnection : Bare {
    mutable Conn conn;
    Conn& connection() const noexcept { return conn; }
};

}  // namespace

TEST(a_bare_lock_gets_the_fallbacks) {
    Bare bare;
    const LockRef ref = LockRef::to(bare);
    CHECK(ref.object() == &bare);
    CHECK_EQ(ref.extend(300, 7), Status::not_owner);
    CHECK_EQ(bare.extended_ttl, 300U);
    CHECK_EQ(bare.extended_wait, 7U);
    CHECK_EQ(ref.remaining_ms(), 42U);
    CHECK(ref.token() == "tok");
    CHECK_EQ(ref.release(), Status::invalid_argument);
    CHECK(ref.key().empty());
    ref.close();  // nothing to close: must do nothing
}

TEST(optional_members_are_called_when_present) {
    Full full;
    const LockRef ref = LockRef::to(full);
    CHECK_EQ(ref.release(), Status::expired);
    CHECK_EQ(full.released, 1);
    CHECK(ref.key() == "job");
    ref.close();
    CHECK_EQ(full.closed, 1);
    CHECK_EQ(full.conn.closed, 0);
}

TEST(close_falls_back_to_the_connection) {
    ViaConnection lock;
    LockRef::to(lock).close();
    CHECK_EQ(lock.conn.closed, 1);
}

TEST(every_lock_kind_gives_its_key_and_releases_through_its_own_call) {
    resplock::mock::MockPort mock;
    char buf[64];
    resplock::Connection conn(mock.port(), resplock::ConnectionConfig{}, buf, sizeof buf);
    resplock::Lock lock(conn, "a");
    resplock::FairLock fair(conn, "b");
    resplock::ReentrantLock reentrant(conn, "c");
    resplock::Semaphore semaphore(conn, "d", 2);
    resplock::Connection* conns[] = {&conn};
    resplock::QuorumLock quorum(conns, 1, "e");
    CHECK(LockRef::to(lock).key() == "a");
    CHECK(LockRef::to(fair).key() == "b");
    CHECK(LockRef::to(reentrant).key() == "c");
    CHECK(LockRef::to(semaphore).key() == "d");
    CHECK(LockRef::to(quorum).key() == "e");
    // Nothing held: each kind's own release() answers, without a request.
    CHECK_EQ(LockRef::to(lock).release(), Status::invalid_argument);
    CHECK_EQ(LockRef::to(quorum).release(), Status::invalid_argument);
    CHECK(mock.done());  // no request was made
}
