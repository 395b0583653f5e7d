// The trial's checker: reads a run's history and judges it without asking the library what it
// believed. What it checks, for every phase (one fault) of a run, with the run's limit N (1 for a
// lock, the semaphore's limit for a semaphore):
//   overlap   more than N sessions (acquisitions) whose writes interleave at the resource: a
//             session writes for the first time while N others have written and will write
//             again (for a lock: one wrote, then the other, then the first again). Counted over
//             every write the clients sent (what a plain resource receives) and over the writes
//             the resource accepted.
//   late      a write of a session sent after its lock surely ended on the server: the last
//             acquire or extend that succeeded returned at end_us, so the key was set before it
//             and expires by end_us + TTL (+ 2 ms of server clock granularity). Only library
//             sessions: a `resplock run` COMMAND cannot know when its lock was taken.
//   order     fencing numbers out of order: one acquisition returned before another began, yet
//             the later one got a number not above it, or two acquisitions got the same number;
//             and, at a fenced resource, an accepted write with a number below the N highest it
//             accepted earlier (for a lock: below the highest).
//   liveness  no acquisition within the phase's bound after its fault was healed; for a fault
//             the topology should ride through (Phase::live_throughout), also none for longer
//             than the bound while it lasted.
// Each violation comes with the history around it.
#ifndef RESPLOCK_TESTS_TRIAL_CHECKER_HPP
#define RESPLOCK_TESTS_TRIAL_CHECKER_HPP

#include <cstdint>
#include <string>
#include <vector>

#include "history.hpp"
#include "resource.hpp"

namespace trial {

struct Finding {
    std::string what;     // one line
    std::string context;  // the records around it, one per line
};

struct PhaseResult {
    std::string fault;
    int acquisitions = 0;
    int writes = 0;
    int overlaps = 0;           // over every write sent
    int accepted_overlaps = 0;  // over the writes the resource accepted
    int late = 0;
    int order = 0;
    bool live = true;
    std::int64_t recovery_us = -1;    // heal to the first acquisition after it (-1: none)
    std::int64_t longest_gap_us = 0;  // the longest time without an accepted write
    std::vector<Finding> findings;
};

struct Verdict {
    std::vector<PhaseResult> phases;
    // Violations a resource of this run's mode let through: every kind at a plain resource;
    // accepted overlaps, order and liveness at a fenced one.
    int reached = 0;
};

// `limit`: how many holders may write at once (1: a lock; N: a semaphore of limit N).
Verdict check(const History& history, Mode mode, const std::vector<Phase>& phases,
              std::uint32_t limit = 1);

// The whole history, one record per line with its time in ms since `origin_us`.
std::string format(const History& history, std::int64_t origin_us);

}  // namespace trial

#endif  // RESPLOCK_TESTS_TRIAL_CHECKER_HPP
