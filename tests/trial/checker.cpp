// The trial's checker: see checker.hpp.
#include "checker.hpp"

#include <algorithm>
#include <cstdio>
#include <map>
#include <set>

namespace trial {

namespace {

constexpr std::int64_t server_granularity_us = 2000;
constexpr std::size_t context_records = 12;  // per session, around a finding

struct Session {
    std::string token;
    std::uint64_t fence = 0;
    std::int64_t begin_us = 0;  // of the acquire call (0: unknown)
    std::int64_t end_us = 0;
    std::int64_t acquired_at = 0;                          // when the resource got the A record
    std::int64_t valid_until = 0;                          // 0: unknown
    std::int64_t first_sent = -1, last_sent = -1;          // every write
    std::int64_t first_accepted = -1, last_accepted = -1;  // accepted writes
};

void widen(std::int64_t& first, std::int64_t& last, std::int64_t at) {
    if (first < 0) first = at;
    last = at;
}

// The phase that holds `at` (the last one if none: the history ends with the run).
std::size_t phase_of(const std::vector<Phase>& phases, std::int64_t at) {
    for (std::size_t i = 0; i < phases.size(); ++i)
        if (at < phases[i].end_us) return i;
    return phases.empty() ? 0 : phases.size() - 1;
}

std::string line_of(const Event& e, std::int64_t origin_us) {
    char head[64];
    std::snprintf(head, sizeof head, "%10.3f ms  ", static_cast<double>(e.at_us - origin_us) / 1e3);
    return head + e.line + (e.refused ? "  -> refused" : "");
}

// The records of the sessions `tokens` (at most context_records each, around `at`), and the
// trial's own.
std::string context(const History& h, const std::vector<std::string>& tokens, std::int64_t at,
                    std::int64_t origin_us) {
    std::string out;
    std::map<std::string, std::vector<std::size_t>> of;
    for (std::size_t i = 0; i < h.size(); ++i)
        if (std::find(tokens.begin(), tokens.end(), h[i].session) != tokens.end())
            of[h[i].session].push_back(i);
    std::set<std::size_t> keep;
    for (auto& [token, idx] : of) {
        // The records closest to `at`.
        std::sort(idx.begin(), idx.end(), [&](std::size_t x, std::size_t y) {
            return std::llabs(h[x].at_us - at) < std::llabs(h[y].at_us - at);
        });
        for (std::size_t k = 0; k < idx.size() && k < context_records; ++k)
            keep.insert(idx[k]);
        // Always the acquisition.
        for (std::size_t i : idx)
            if (h[i].kind == 'A') keep.insert(i);
    }
    for (std::size_t i = 0; i < h.size(); ++i)
        if (h[i].kind == 'F' || h[i].kind == 'H') keep.insert(i);
    for (std::size_t i : keep)
        out += "  " + line_of(h[i], origin_us) + "\n";
    return out;
}

std::string ms(std::int64_t us) {
    char b[32];
    std::snprintf(b, sizeof b, "%.1f ms", static_cast<double>(us) / 1e3);
    return b;
}

}  // namespace

std::string format(const History& history, std::int64_t origin_us) {
    std::string out;
    for (const Event& e : history)
        out += line_of(e, origin_us) + "\n";
    return out;
}

Verdict check(const History& h, Mode mode, const std::vector<Phase>& phases, std::uint32_t limit) {
    if (limit == 0) limit = 1;
    Verdict v;
    for (const Phase& p : phases) {
        PhaseResult r;
        r.fault = p.fault;
        v.phases.push_back(r);
    }
    if (phases.empty()) return v;
    const std::int64_t origin = phases.front().start_us;
    auto add = [&](std::int64_t at, int PhaseResult::*count, std::string what,
                   const std::vector<std::string>& tokens) {
        PhaseResult& r = v.phases[phase_of(phases, at)];
        ++(r.*count);
        r.findings.push_back({std::move(what), context(h, tokens, at, origin)});
    };

    std::map<std::string, Session> sessions;
    // First the acquisitions and extensions: an extension proves the key alive until it reached
    // the server, whenever its record reached the resource (it may come after a write).
    for (const Event& e : h) {
        if (e.kind == 'A') {
            Session& s = sessions[e.session];
            s.token = e.session;
            s.fence = e.fence;
            s.begin_us = e.begin_us;
            s.end_us = e.end_us;
            s.acquired_at = e.at_us;
            if (e.ttl_ms > 0) s.valid_until = e.end_us + e.ttl_ms * std::int64_t{1000};
            if (e.at_us >= origin) ++v.phases[phase_of(phases, e.at_us)].acquisitions;
        }
    }
    for (const Event& e : h) {
        auto it = sessions.find(e.session);
        if (e.kind == 'E' && it != sessions.end() && it->second.valid_until > 0) {
            it->second.valid_until =
                std::max(it->second.valid_until, e.end_us + e.ttl_ms * std::int64_t{1000});
        }
    }
    std::vector<const Event*> accepted;  // accepted writes, in order
    for (const Event& e : h) {
        if (e.kind != 'W') continue;
        Session& s = sessions[e.session];
        if (s.token.empty()) s.token = e.session;
        widen(s.first_sent, s.last_sent, e.at_us);
        if (!e.refused) {
            widen(s.first_accepted, s.last_accepted, e.at_us);
            accepted.push_back(&e);
        }
        if (e.at_us >= origin) ++v.phases[phase_of(phases, e.at_us)].writes;
        if (s.valid_until > 0 && e.at_us > s.valid_until + server_granularity_us) {
            add(e.at_us, &PhaseResult::late,
                "late: " + e.session + " wrote " + ms(e.at_us - s.valid_until) +
                    " after its lock surely ended",
                {e.session});
        }
    }

    // Overlaps: sessions by their first write; one that starts while `limit` others have written
    // and not yet written for the last time interleaves with them: limit + 1 holders at once.
    auto overlaps = [&](bool accepted_only, int PhaseResult::*count) {
        struct Span {
            std::int64_t first, last;
            const Session* s;
        };
        std::vector<Span> spans;
        for (const auto& [token, s] : sessions) {
            const std::int64_t first = accepted_only ? s.first_accepted : s.first_sent;
            const std::int64_t last = accepted_only ? s.last_accepted : s.last_sent;
            if (first >= 0) spans.push_back({first, last, &s});
        }
        std::sort(spans.begin(), spans.end(),
                  [](const Span& x, const Span& y) { return x.first < y.first; });
        std::vector<const Span*> writing;  // the spans still writing at the current one's start
        for (const Span& sp : spans) {
            writing.erase(std::remove_if(writing.begin(), writing.end(),
                                         [&](const Span* w) { return w->last <= sp.first; }),
                          writing.end());
            if (writing.size() >= limit) {
                std::string others;
                std::vector<std::string> tokens = {sp.s->token};
                for (const Span* w : writing) {
                    others += (others.empty() ? "" : ", ") + w->s->token;
                    tokens.push_back(w->s->token);
                }
                add(sp.first, count,
                    std::string(accepted_only ? "accepted overlap: " : "overlap: ") + sp.s->token +
                        " wrote while " + others + (writing.size() > 1 ? " were" : " was") +
                        " still writing" +
                        (limit > 1 ? " (limit " + std::to_string(limit) + ")" : std::string()),
                    tokens);
            }
            writing.push_back(&sp);
        }
    };
    overlaps(false, &PhaseResult::overlaps);
    overlaps(true, &PhaseResult::accepted_overlaps);

    // Fencing numbers: unique, and increasing in real time.
    std::vector<const Session*> fenced;
    for (const auto& [token, s] : sessions)
        if (s.fence > 0) fenced.push_back(&s);
    std::map<std::uint64_t, const Session*> by_number;
    for (const Session* s : fenced) {
        auto [it, fresh] = by_number.emplace(s->fence, s);
        // Counted where the later of the two was acquired: that is when the number repeated.
        if (!fresh)
            add(std::max(s->acquired_at, it->second->acquired_at), &PhaseResult::order,
                "order: " + s->token + " and " + it->second->token +
                    " got the same fencing number " + std::to_string(s->fence),
                {s->token, it->second->token});
    }
    std::vector<const Session*> timed;
    for (const Session* s : fenced)
        if (s->begin_us > 0) timed.push_back(s);
    std::vector<const Session*> by_end = timed;
    std::sort(timed.begin(), timed.end(),
              [](const Session* x, const Session* y) { return x->begin_us < y->begin_us; });
    std::sort(by_end.begin(), by_end.end(),
              [](const Session* x, const Session* y) { return x->end_us < y->end_us; });
    const Session* top = nullptr;  // the highest number among acquisitions that ended
    std::size_t ended = 0;
    for (const Session* s : timed) {
        while (ended < by_end.size() && by_end[ended]->end_us < s->begin_us) {
            if (top == nullptr || by_end[ended]->fence > top->fence) top = by_end[ended];
            ++ended;
        }
        if (top != nullptr && s->fence < top->fence)
            add(s->acquired_at, &PhaseResult::order,
                "order: " + s->token + " got fencing number " + std::to_string(s->fence) +
                    ", below " + std::to_string(top->fence) + " of " + top->token +
                    ", whose acquisition had returned before",
                {s->token, top->token});
    }
    // At a fenced resource: no accepted number below the limit-th highest accepted before (the
    // highest, for a lock).
    if (mode != Mode::plain) {
        // The highest numbers accepted so far, distinct, highest first, at most limit.
        std::vector<const Event*> highest;
        for (const Event* w : accepted) {
            if (highest.size() == limit && w->fence < highest.back()->fence)
                add(w->at_us, &PhaseResult::order,
                    "order: the resource accepted fencing number " + std::to_string(w->fence) +
                        " after " + std::to_string(highest.back()->fence) +
                        (limit > 1 ? " and " + std::to_string(limit - 1) + " higher"
                                   : std::string()),
                    {w->session, highest.back()->session});
            const bool known = std::any_of(highest.begin(), highest.end(),
                                           [&](const Event* t) { return t->fence == w->fence; });
            if (!known) {
                highest.push_back(w);
                std::sort(highest.begin(), highest.end(),
                          [](const Event* x, const Event* y) { return x->fence > y->fence; });
                if (highest.size() > limit) highest.pop_back();
            }
        }
    }

    // Liveness and unavailability, phase by phase.
    for (std::size_t i = 0; i < phases.size(); ++i) {
        const Phase& p = phases[i];
        PhaseResult& r = v.phases[i];
        for (const Event& e : h) {
            if (e.at_us >= p.end_us) break;
            if (e.kind == 'A' && e.at_us >= p.heal_us) {
                r.recovery_us = e.at_us - p.heal_us;
                break;
            }
        }
        r.live = r.recovery_us >= 0 && r.recovery_us <= p.bound_us;
        if (!r.live) {
            r.findings.push_back(
                {"liveness: no acquisition within " + ms(p.bound_us) +
                     " after the fault was healed" +
                     (r.recovery_us >= 0 ? " (first after " + ms(r.recovery_us) + ")"
                                         : std::string(" (none)")),
                 ""});
        }
        if (p.live_throughout) {
            // The longest time from the fault's start to its heal without an acquisition.
            std::int64_t last = p.start_us, idle = 0, idle_from = p.start_us;
            for (const Event& e : h) {
                if (e.at_us >= p.heal_us) break;
                if (e.kind != 'A' || e.at_us < p.start_us) continue;
                if (e.at_us - last > idle) {
                    idle = e.at_us - last;
                    idle_from = last;
                }
                last = e.at_us;
            }
            if (p.heal_us - last > idle) {
                idle = p.heal_us - last;
                idle_from = last;
            }
            if (idle > p.bound_us) {
                r.live = false;
                r.findings.push_back(
                    {"liveness: no acquisition for " + ms(idle) + " from " +
                         ms(idle_from - p.start_us) +
                         " after the fault began, which the topology should ride through (bound " +
                         ms(p.bound_us) + ")",
                     ""});
            }
        }
        std::int64_t last = p.start_us;
        for (const Event* w : accepted) {
            if (w->at_us < p.start_us) continue;
            if (w->at_us >= p.end_us) break;
            r.longest_gap_us = std::max(r.longest_gap_us, w->at_us - last);
            last = w->at_us;
        }
        r.longest_gap_us = std::max(r.longest_gap_us, p.end_us - last);
    }

    for (const PhaseResult& r : v.phases) {
        v.reached += r.order + (r.live ? 0 : 1);
        v.reached += mode == Mode::plain ? r.overlaps + r.late : r.accepted_overlaps;
    }
    return v;
}

}  // namespace trial
