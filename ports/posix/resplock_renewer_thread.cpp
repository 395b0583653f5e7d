#include "resplock_renewer_thread.hpp"

#include <signal.h>
#include <time.h>

namespace resplock {

namespace {

timespec monotonic_after(const timespec& from, std::uint32_t ms) noexcept {
    timespec t = from;
    t.tv_sec += static_cast<time_t>(ms / 1000U);
    t.tv_nsec += static_cast<long>(ms % 1000U) * 1000000L;
    if (t.tv_nsec >= 1000000000L) {
        t.tv_sec += 1;
        t.tv_nsec -= 1000000000L;
    }
    return t;
}

}  // namespace

RenewerThread::RenewerThread(Renewer& renewer, const resplock_port_t& port) noexcept
    : renewer_(renewer), port_(port) {
    // Timed waits on the monotonic clock, so a change of the wall clock cannot stretch them.
    pthread_condattr_t attr;
    (void)pthread_condattr_init(&attr);
    (void)pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
    (void)pthread_cond_init(&wake_cond_, &attr);
    (void)pthread_condattr_destroy(&attr);
}

RenewerThread::~RenewerThread() {
    stop();
    (void)pthread_cond_destroy(&wake_cond_);
    (void)pthread_mutex_destroy(&mutex_);
}

Status RenewerThread::start() noexcept {
    if (started_) return Status::invalid_argument;
    stopping_ = false;
    // The thread inherits a mask that blocks every signal: signals for the process go to the
    // caller's threads, which may be waiting for them.
    sigset_t all;
    sigset_t old;
    (void)sigfillset(&all);
    (void)pthread_sigmask(SIG_SETMASK, &all, &old);
    const int err = pthread_create(&thread_, nullptr, &RenewerThread::run, this);
    (void)pthread_sigmask(SIG_SETMASK, &old, nullptr);
    if (err != 0) return Status::io_error;
    started_ = true;
    return Status::ok;
}

void RenewerThread::stop() noexcept {
    if (!started_) return;
    if (pthread_equal(pthread_self(), thread_) != 0) {
        stopping_ = true;  // from the lost callback, which holds the mutex: the thread ends
        return;            // after this tick, and is joined by a later stop() or the destructor
    }
    lock();
    stopping_ = true;
    unlock();
    (void)pthread_join(thread_, nullptr);
    started_ = false;
}

void RenewerThread::lock() noexcept {
    (void)pthread_mutex_lock(&mutex_);
}

void RenewerThread::unlock() noexcept {
    woken_ = true;
    (void)pthread_cond_signal(&wake_cond_);
    (void)pthread_mutex_unlock(&mutex_);
}

void* RenewerThread::run(void* self) noexcept {
    auto& t = *static_cast<RenewerThread*>(self);
    (void)pthread_mutex_lock(&t.mutex_);
    while (!t.stopping_) {
        timespec from{};
        (void)clock_gettime(CLOCK_MONOTONIC, &from);
        t.woken_ = false;
        const std::uint32_t next = t.renewer_.tick(t.port_.now_ms(t.port_.ctx));
        const timespec until = monotonic_after(from, next);
        // Sleep until the next renewal is due, stop() is called or the caller changed something
        // under lock(); a spurious wake-up only costs an early tick.
        if (!t.stopping_ && !t.woken_) {
            (void)pthread_cond_timedwait(&t.wake_cond_, &t.mutex_, &until);
        }
    }
    (void)pthread_mutex_unlock(&t.mutex_);
    return nullptr;
}

}  // namespace resplock
