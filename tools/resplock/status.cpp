// `resplock status KEY` (see status.hpp).
#include "status.hpp"

#include <cstdio>
#include <cstring>

#include "exit_codes.hpp"
#include "inspect.hpp"
#include "messages.hpp"
#include "resplock/core/lock.hpp"
#include "resplock/core/status.hpp"
#include "resplock/variants/reentrant_lock.hpp"
#include "view_output.hpp"

namespace resplock_cli {

using resplock::Status;

namespace {

// The owner label of the token `conn` holds at `key` (GET: the text before its ':'), copied to
// out; empty when the key holds no string, a token without a label, or the GET failed (the label
// is shown for information only; status itself comes from the query).
void holder_label(resplock::Connection& conn, std::string_view key,
                  char (&out)[sizeof Options{}.owner]) {
    out[0] = '\0';
    const std::string_view get[2] = {"GET", key};
    resplock::resp::Reply reply;
    if (conn.command(get, 2, reply) != Status::ok ||
        !reply.top().is(resplock::resp::Type::bulk_string)) {
        return;
    }
    const std::string_view value = reply.top().text();
    const std::size_t colon = value.find(':');
    if (colon == std::string_view::npos || colon == 0 || colon >= sizeof out) return;
    for (std::size_t i = 0; i < colon; ++i) {
        if (!resplock::owner_label_char(value[i])) return;
    }
    std::memcpy(out, value.data(), colon);
    out[colon] = '\0';
}

int print_status(const resplock::LockInfo& info, const char* label) {
    if (info.state == resplock::LockState::free) {
        std::puts("free");
        (void)std::fflush(stdout);
        return exit_not_owner;
    }
    // A key without a TTL (PTTL -1, e.g. set by hand) never ends by itself.
    char remaining[24] = "forever";
    if (info.ttl_ms >= 0)
        (void)std::snprintf(remaining, sizeof remaining, "%lld",
                            static_cast<long long>(info.ttl_ms));
    if (label[0] != '\0') {
        std::printf("held %s %s\n", remaining, label);
    } else {
        std::printf("held %s\n", remaining);
    }
    return std::fflush(stdout) == 0 ? exit_ok : exit_io;
}

// One live lease of the semaphore: "<remaining-ms> <label>" ("<remaining-ms>" without a label).
// A byte no owner label may hold (from a token some other client wrote) is shown as '?'.
void print_holder(void* /*ctx*/, const resplock::SemaphoreHolder& holder) noexcept {
    char label[sizeof Options{}.owner];
    std::size_t n = 0;
    for (; n < holder.owner.size() && n + 1 < sizeof label; ++n)
        label[n] = resplock::owner_label_char(holder.owner[n]) ? holder.owner[n] : '?';
    label[n] = '\0';
    const auto ms = static_cast<unsigned>(holder.remaining_ms);
    if (n != 0) {
        std::printf("%u %s\n", ms, label);
    } else {
        std::printf("%u\n", ms);
    }
}

}  // namespace

int status_inspect(resplock::Connection& conn, std::string_view key, const Options& o,
                   const Target& t) {
    KeyView view;
    Status s = inspect_key(conn, key, view);
    if (s != Status::ok) return fail(s, o.command_name, o.key_shown.text, t);
    s = o.json ? print_json(stdout, conn, key, view, o.limit)
               : print_verbose(stdout, conn, key, view, o.limit);
    const bool written = std::fflush(stdout) == 0;
    if (s != Status::ok) return fail(s, o.command_name, o.key_shown.text, t);
    if (!written) return exit_io;
    return view.held() ? exit_ok : exit_not_owner;
}

int status_single(resplock::Connection& conn, std::string_view key, const Options& o,
                  const Target& t) {
    if (o.json || o.verbose) return status_inspect(conn, key, o, t);
    resplock::Lock lock(conn, key);
    resplock::LockInfo info;
    Status s = lock.query(info);
    char label[sizeof o.owner] = "";
    if (s == Status::wrong_type) {
        // Not a string: a reentrant lock's hash (or some other value) holds the key. The
        // reentrant lock's query reads any type and gives its PTTL.
        resplock::ReentrantLock reentrant(lock.connection(), lock.key());
        resplock::ReentrantInfo held;
        s = reentrant.query(held);
        info.state = held.state;
        info.ttl_ms = held.ttl_ms;
    } else if (s == Status::ok && info.state != resplock::LockState::free) {
        holder_label(lock.connection(), lock.key(), label);
    }
    if (s != Status::ok) return fail(s, o.command_name, o.key_shown.text, t);
    return print_status(info, label);
}

int status_quorum(resplock::QuorumLock& lock, resplock::Connection* const* conns, const Options& o,
                  const Target& t) {
    resplock::LockInfo info;
    const Status s = lock.query(info);
    if (s != Status::ok) return fail(s, o.command_name, o.key_shown.text, t);
    char labels[RESPLOCK_MAX_SERVERS][sizeof o.owner] = {};
    const char* label = "";
    const std::size_t n = static_cast<std::size_t>(o.url_count);
    for (std::size_t i = 0; info.state != resplock::LockState::free && i < n; ++i)
        holder_label(*conns[i], lock.key(), labels[i]);
    for (std::size_t i = 0; i < n && label[0] == '\0'; ++i) {
        std::size_t same = 0;
        for (std::size_t j = 0; j < n; ++j)
            same += std::strcmp(labels[i], labels[j]) == 0 ? 1U : 0U;
        if (same >= lock.quorum()) label = labels[i];
    }
    return print_status(info, label);
}

int status_semaphore(resplock::Semaphore& semaphore, const Options& o, const Target& t) {
    if (o.json || o.verbose) return status_inspect(semaphore.connection(), semaphore.key(), o, t);
    resplock::SemaphoreInfo info;
    Status s = semaphore.query(info);
    if (s != Status::ok) return fail(s, o.command_name, o.key_shown.text, t);
    std::printf("%s %u/%u\n", info.count != 0 ? "held" : "free", static_cast<unsigned>(info.count),
                static_cast<unsigned>(o.limit));
    if (info.count != 0) s = semaphore.holders(&print_holder, nullptr);
    const bool written = std::fflush(stdout) == 0;
    if (s != Status::ok) return fail(s, o.command_name, o.key_shown.text, t);
    if (info.waiters != 0) {
        report("status %s: %u waiting in the fair queue", o.key_shown.text,
               static_cast<unsigned>(info.waiters));
    }
    if (!written) return exit_io;
    return info.count != 0 ? exit_ok : exit_not_owner;
}

}  // namespace resplock_cli
