// The trial's history: every record the workload clients sent to the resource, and every fault
// the trial injected and healed, each stamped by the resource on one clock (CLOCK_BOOTTIME in
// microseconds, the same for every process of the host).
//
// Client records (the protocol of tests/trial/resource_client.hpp):
//   A session fence begin_us end_us ttl_ms client   acquired (begin/end: around the call; 0 0 0
//                                                   from a `resplock run` COMMAND, which cannot
//                                                   know when its lock was taken)
//   E session begin_us end_us ttl_ms                extended
//   W session fence                                 a protected write, accepted or refused
//   L session why                                   told the lock is lost; no write follows
//   R session status                                released
//   B client / U client status                      not acquired (busy / another error)
// Trial records: F (a fault starts), H (it is healed), Q (the phase ends), with its text.
#ifndef RESPLOCK_TESTS_TRIAL_HISTORY_HPP
#define RESPLOCK_TESTS_TRIAL_HISTORY_HPP

#include <cstdint>
#include <string>
#include <vector>

namespace trial {

struct Event {
    std::int64_t at_us = 0;  // when the resource received it
    char kind = '?';
    std::string session;  // A E W L R: the lock's token
    std::uint64_t fence = 0;
    std::int64_t begin_us = 0;  // A E
    std::int64_t end_us = 0;    // A E
    std::uint32_t ttl_ms = 0;   // A E
    bool refused = false;       // W
    std::string line;           // the record as received (F H Q: the trial's text)
};

using History = std::vector<Event>;

// One fault of a run: injected at start_us, healed at heal_us; the phase lasts until end_us (the
// next fault's start, or the end of the run).
struct Phase {
    std::string fault;
    std::int64_t start_us = 0;
    std::int64_t heal_us = 0;
    std::int64_t end_us = 0;
    // Some client must acquire within this long after heal_us (the liveness bound).
    std::int64_t bound_us = 0;
    // A fault the topology should ride through (e.g. one sentinel of three frozen): also from
    // start_us to heal_us, no span longer than bound_us may pass without an acquisition.
    bool live_throughout = false;
};

// Parses one record line into `e` (at_us untouched). False if it is not one.
bool parse(const std::string& line, Event& e);

}  // namespace trial

#endif  // RESPLOCK_TESTS_TRIAL_HISTORY_HPP
