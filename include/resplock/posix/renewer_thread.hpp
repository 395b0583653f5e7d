// A POSIX thread that drives a Renewer: it calls tick() and sleeps until the next renewal is due
// or stop() is called. On Linux it sleeps on a CLOCK_BOOTTIME timer, so that it wakes up as soon
// as the system resumes from a suspend that outlasted its wait (CLOCK_MONOTONIC, the clock of
// pthread_cond_timedwait, stops while suspended); elsewhere on a condition variable with
// CLOCK_MONOTONIC.
//
// The thread holds the object's mutex while it ticks, so the locks, their connections and the
// Renewer are used by one thread at a time only if the caller holds it too: while the thread
// runs, the caller must hold lock() (e.g. std::lock_guard<RenewerThread>) around every use of a
// watched lock or its connection (acquire, release, query...) and around watch()/unwatch().
// lock() may wait for a tick in progress, which is bounded by the connections' timeouts.
// unlock() wakes the thread, so a lock watched under lock() gets its schedule at once.
//
// The lost callback runs on the thread, with the mutex held: it may unwatch() and release()
// directly, but must not call lock() or wait for another thread (stop() from it only ends the
// thread after this tick). To tell another thread, write to a pipe, post a semaphore or send a
// signal. The thread blocks every signal, so signals sent to the process reach other threads.
#ifndef RESPLOCK_RENEWER_THREAD_HPP
#define RESPLOCK_RENEWER_THREAD_HPP

#include <pthread.h>

#include <atomic>

#include "resplock/core/port.h"
#include "resplock/variants/renewer.hpp"

namespace resplock {

class RenewerThread {
  public:
    // `renewer` must outlive this object; `port` (copied) supplies the clock passed to tick(),
    // that of the watched locks' connections.
    RenewerThread(Renewer& renewer, const resplock_port_t& port) noexcept;
    // stop()s the thread.
    ~RenewerThread();
    RenewerThread(const RenewerThread&) = delete;
    RenewerThread& operator=(const RenewerThread&) = delete;

    // Starts the thread. Returns ok, invalid_argument (already started) or io_error (the system
    // could not create the thread).
    Status start() noexcept;
    // Wakes the thread, waits for it to finish its tick and joins it. Idempotent; start() may
    // be called again afterwards.
    void stop() noexcept;

    // BasicLockable: excludes the thread's ticks.
    void lock() noexcept;
    void unlock() noexcept;

  private:
    static void* run(void* self) noexcept;
    // Sleeps up to ms with the mutex released, or until unlock() or stop() wakes it.
    void wait(std::uint32_t ms) noexcept;
    void close_fds() noexcept;

    Renewer& renewer_;
    resplock_port_t port_;
    pthread_mutex_t mutex_ = PTHREAD_MUTEX_INITIALIZER;
    pthread_cond_t wake_cond_{};
    pthread_t thread_{};
    bool started_ = false;
    // Written by stop() before it waits for mutex_, read by the thread after each tick: a thread
    // that ticks back to back (renewals that take longer than their interval) would otherwise
    // take mutex_ again before stop() gets it, and renew on after its caller asked it to stop.
    std::atomic<bool> stopping_{false};
    bool woken_ = false;  // guarded by mutex_: unlock() since the last tick
    int timer_fd_ = -1;   // Linux: a CLOCK_BOOTTIME timerfd, and an eventfd for unlock()
    int wake_fd_ = -1;
};

}  // namespace resplock

#endif  // RESPLOCK_RENEWER_THREAD_HPP
