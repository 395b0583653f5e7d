// What the benchmark's contended runs compute from recorded holds, shared by resplock_bench (its
// hand-off part and the records of the Node peers) and resplock_scale (many devices, many keys):
// one definition of an overlap, of a hand-off's delay and of a request count.
#ifndef RESPLOCK_BENCH_HOLD_FIGURES_HPP
#define RESPLOCK_BENCH_HOLD_FIGURES_HPP

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <deque>
#include <string>
#include <vector>

namespace bench {

struct Hold {
    std::int64_t acquired_ns;  // just after the acquiring call returned with the lock held
    std::int64_t release_ns;   // when the send() of the release request began
    int worker;
};

// One field (`calls`, or `usec`: the server's own time) of one command in INFO commandstats
// text (0 if it never ran). Each command's line reads "cmdstat_NAME:calls=N,usec=N,...".
inline long command_stat(const std::string& info, const char* command, const char* field) {
    const std::size_t line = info.find(std::string("cmdstat_") + command + ":");
    if (line == std::string::npos) return 0;
    const std::string tag = std::string(field) + "=";
    const std::size_t at = info.find(tag, line);
    return at == std::string::npos ? 0 : std::atol(info.c_str() + at + tag.size());
}
inline long command_calls(const std::string& info, const char* command) {
    return command_stat(info, command, "calls");
}

inline double percentile(std::vector<double> v, double p) {
    std::sort(v.begin(), v.end());
    const auto rank = static_cast<std::size_t>(std::ceil(p * static_cast<double>(v.size())));
    return v[rank == 0 ? 0 : rank - 1];
}

// What the recorded holds of one run say, with `limit` places (1 for a lock).
struct HoldFigures {
    long over_limit = 0;            // acquisitions that returned while `limit` others were held
    int most = 0;                   // the most holds at once
    std::vector<double> delays_ms;  // from a release to the grant it is paired with
};

// Walks the holds' enter (acquired_ns) and exit (release_ns) times in order. Each hold lies inside
// the holder's real tenure: it begins after the grant's reply came back and ends before the
// release request left. An enter and an exit at the same time count the enter first, as an
// overlap. Each release is paired with the first grant after it that no earlier release was
// paired with: the place it freed, taken by the next holder (with one place, the next hold).
inline HoldFigures hold_figures(const std::vector<Hold>& holds, long limit) {
    struct Event {
        std::int64_t at_ns;
        bool enter;
    };
    std::vector<Event> events;
    events.reserve(2 * holds.size());
    for (const Hold& h : holds) {
        events.push_back({h.acquired_ns, true});
        events.push_back({h.release_ns, false});
    }
    std::sort(events.begin(), events.end(), [](const Event& a, const Event& b) {
        return a.at_ns != b.at_ns ? a.at_ns < b.at_ns : a.enter && !b.enter;
    });
    HoldFigures f;
    int holding = 0;
    std::deque<std::int64_t> freed;  // releases not yet followed by a grant
    for (const Event& e : events) {
        if (!e.enter) {
            --holding;
            freed.push_back(e.at_ns);
            continue;
        }
        if (holding >= limit) ++f.over_limit;
        f.most = std::max(f.most, ++holding);
        if (!freed.empty()) {
            f.delays_ms.push_back(static_cast<double>(e.at_ns - freed.front()) / 1e6);
            freed.pop_front();
        }
    }
    return f;
}

}  // namespace bench

#endif  // RESPLOCK_BENCH_HOLD_FIGURES_HPP
