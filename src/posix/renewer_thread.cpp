#include "resplock/posix/renewer_thread.hpp"

#include <signal.h>
#include <time.h>
#include <unistd.h>

#if defined(__linux__)
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/timerfd.h>
#endif

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

// On Linux, CLOCK_MONOTONIC stops while the system is suspended, so a wait on it would sleep
// through the end of a lock's validity measured on CLOCK_BOOTTIME (the POSIX port's clock). A
// timer on CLOCK_BOOTTIME fires at resume instead. Without one (a kernel older than 3.15), the
// condition variable's wait is used.
RenewerThread::RenewerThread(Renewer& renewer, const resplock_port_t& port) noexcept
    : renewer_(renewer),
      port_(port)
#if defined(__linux__)
      ,
      timer_fd_(timerfd_create(CLOCK_BOOTTIME, TFD_CLOEXEC | TFD_NONBLOCK)),
      wake_fd_(eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK))
#endif
{
    // Timed waits on the monotonic clock, so a change of the wall clock cannot stretch them.
    pthread_condattr_t attr;
    (void)pthread_condattr_init(&attr);
    (void)pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
    (void)pthread_cond_init(&wake_cond_, &attr);
    (void)pthread_condattr_destroy(&attr);
    if (timer_fd_ < 0 || wake_fd_ < 0) close_fds();
}

RenewerThread::~RenewerThread() {
    stop();
    close_fds();
    (void)pthread_cond_destroy(&wake_cond_);
    (void)pthread_mutex_destroy(&mutex_);
}

void RenewerThread::close_fds() noexcept {
    for (int* fd : {&timer_fd_, &wake_fd_}) {
        if (*fd >= 0) (void)close(*fd);
        *fd = -1;
    }
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
    stopping_ = true;  // seen by the thread after its current tick, before it locks again
    lock();
    unlock();  // wakes a thread that waits for its next renewal
    (void)pthread_join(thread_, nullptr);
    started_ = false;
}

void RenewerThread::lock() noexcept {
    (void)pthread_mutex_lock(&mutex_);
}

void RenewerThread::unlock() noexcept {
    woken_ = true;
    (void)pthread_cond_signal(&wake_cond_);
#if defined(__linux__)
    if (wake_fd_ >= 0) {
        const std::uint64_t one = 1;
        (void)!write(wake_fd_, &one, sizeof one);  // fails only when the counter is full: awake
    }
#endif
    (void)pthread_mutex_unlock(&mutex_);
}

void RenewerThread::wait(std::uint32_t ms) noexcept {
#if defined(__linux__)
    if (timer_fd_ >= 0) {
        itimerspec when{};
        when.it_value.tv_sec = static_cast<time_t>(ms / 1000U);
        when.it_value.tv_nsec = static_cast<long>(ms % 1000U) * 1000000L;
        if (ms == 0) when.it_value.tv_nsec = 1;  // all zero would disarm the timer
        (void)timerfd_settime(timer_fd_, 0, &when, nullptr);
        pollfd fds[2] = {{timer_fd_, POLLIN, 0}, {wake_fd_, POLLIN, 0}};
        (void)pthread_mutex_unlock(&mutex_);
        // A signal cannot interrupt this (the thread blocks them all); an error only costs an
        // early tick.
        (void)poll(fds, 2, -1);
        (void)pthread_mutex_lock(&mutex_);
        std::uint64_t count = 0;
        (void)!read(timer_fd_, &count, sizeof count);  // both non-blocking: EAGAIN when
        (void)!read(wake_fd_, &count, sizeof count);   // nothing is there
        return;
    }
#endif
    timespec from{};
    (void)clock_gettime(CLOCK_MONOTONIC, &from);
    const timespec until = monotonic_after(from, ms);
    (void)pthread_cond_timedwait(&wake_cond_, &mutex_, &until);
}

void* RenewerThread::run(void* self) noexcept {
    auto& t = *static_cast<RenewerThread*>(self);
    (void)pthread_mutex_lock(&t.mutex_);
    while (!t.stopping_) {
        t.woken_ = false;
        const std::uint32_t began = t.port_.now_ms(t.port_.ctx);
        const std::uint32_t next = t.renewer_.tick(began);
        // tick() counts from `began`, and may have blocked on renewals since.
        const std::uint32_t spent = t.port_.now_ms(t.port_.ctx) - began;
        // Sleep until the next renewal is due, stop() is called or the caller changed something
        // under lock(); a spurious wake-up only costs an early tick.
        if (!t.stopping_ && !t.woken_) t.wait(next > spent ? next - spent : 0U);
    }
    (void)pthread_mutex_unlock(&t.mutex_);
    return nullptr;
}

}  // namespace resplock
