// Records the events an Observer reports, for the unit tests to compare with the exact sequence
// they expect. Fixed storage: no heap, so it runs on the Cortex-M4 target too.
#ifndef RESPLOCK_TESTS_EVENT_LOG_HPP
#define RESPLOCK_TESTS_EVENT_LOG_HPP

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string_view>

#include "resplock/core/observer.hpp"

namespace support {

struct EventLog {
    struct Entry {
        resplock::EventKind kind;
        resplock::Status status;
        std::uint32_t number;
        std::uint32_t ms;
        char key[32];
        std::size_t key_len;  // 0: no key (null)
        bool key_null;

        std::string_view key_view() const { return {key, key_len}; }
    };
    static constexpr std::size_t capacity = 32;
    Entry entries[capacity] = {};
    std::size_t count = 0;  // may exceed capacity: only the first `capacity` are kept

    static void record(void* user, const resplock_event_t* e) {
        auto& log = *static_cast<EventLog*>(user);
        if (log.count < capacity) {
            Entry& x = log.entries[log.count];
            x.kind = resplock::kind_of(*e);
            x.status = resplock::status_of(*e);
            x.number = e->number;
            x.ms = e->ms;
            x.key_null = e->key == nullptr;
            x.key_len = e->key_len < sizeof x.key ? e->key_len : sizeof x.key;
            if (e->key != nullptr) std::memcpy(x.key, e->key, x.key_len);
        }
        ++log.count;
    }
    const Entry& operator[](std::size_t i) const { return entries[i]; }
};

}  // namespace support

#endif  // RESPLOCK_TESTS_EVENT_LOG_HPP
