// The protected resource of the trial: a Unix-socket server that the workload clients tell what
// they do (records in history.hpp) and that accepts or refuses their writes. It stamps every
// record with its own clock, so the history does not depend on any client's clock.
//   plain   every write is accepted (storage that knows nothing of locks);
//   fenced  a write whose fencing number is lower than the highest accepted so far is refused
//           (storage that checks fencing tokens); for a semaphore of limit N, one lower than the
//           N highest distinct numbers accepted so far (N holders may write at once, each with
//           its own number: a number N others have outdated is a lease that ended);
//   broken  claims to be fenced but accepts everything: only for the checker's self-test.
// One thread, poll()-based, serves every client; the destructor stops it and removes the socket.
#ifndef RESPLOCK_TESTS_TRIAL_RESOURCE_HPP
#define RESPLOCK_TESTS_TRIAL_RESOURCE_HPP

#include <atomic>
#include <cstdint>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "history.hpp"

namespace trial {

enum class Mode { plain, fenced, broken };

const char* to_string(Mode mode);

class Resource {
  public:
    // limit: how many holders may write at once (1: a lock; N: a semaphore of limit N).
    Resource(std::string path, Mode mode, std::uint32_t limit = 1);
    ~Resource();
    Resource(const Resource&) = delete;
    Resource& operator=(const Resource&) = delete;

    bool ok() const { return listener_ >= 0; }
    const std::string& path() const { return path_; }
    Mode mode() const { return mode_; }
    // Appends a trial record (F, H or Q) stamped now; returns its time.
    std::int64_t note(char kind, const std::string& text);
    // A copy of the history so far.
    History history();

  private:
    void run();
    // The reply to one client line ("ok", "refused" or an error).
    std::string answer(const std::string& line);

    std::string path_;
    Mode mode_;
    int listener_ = -1;
    int wake_[2] = {-1, -1};
    std::mutex mutex_;  // guards history_
    History history_;
    std::uint32_t limit_;
    // The highest fencing numbers accepted, distinct, highest first, at most limit_ (the
    // thread's own).
    std::vector<std::uint64_t> highest_;
    std::atomic<bool> stop_{false};
    std::thread thread_;
};

}  // namespace trial

#endif  // RESPLOCK_TESTS_TRIAL_RESOURCE_HPP
