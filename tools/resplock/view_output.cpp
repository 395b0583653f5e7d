// print_json(), print_verbose() and list's rows (see view_output.hpp).
#include "view_output.hpp"

#include "json_text.hpp"

namespace resplock_cli {

using resplock::Status;

namespace {

// The semaphore's rows show this many holders' labels, then how many more.
constexpr std::uint32_t row_holders = 4;

void json_remaining(std::FILE* out, std::int64_t pttl) {
    if (pttl >= 0) {
        (void)std::fprintf(out, "%lld", static_cast<long long>(pttl));
    } else {
        (void)std::fputs("null", out);
    }
}

void json_label(std::FILE* out, std::string_view label) {
    if (label.empty()) {
        (void)std::fputs("null", out);
    } else {
        json_string(out, label);  // a cleaned label: A-Z a-z 0-9 . _ - ?
    }
}

struct JsonLeases {
    std::FILE* out;
    bool first;
};

void json_lease(void* ctx, std::string_view label, std::uint32_t remaining_ms) {
    auto* c = static_cast<JsonLeases*>(ctx);
    (void)std::fputs(c->first ? "{\"owner\":" : ",{\"owner\":", c->out);
    json_label(c->out, label);
    (void)std::fprintf(c->out, ",\"remaining_ms\":%u}", remaining_ms);
    c->first = false;
}

void text_lease(void* ctx, std::string_view label, std::uint32_t remaining_ms) {
    auto* out = static_cast<std::FILE*>(ctx);
    (void)std::fprintf(out, "holder %u %.*s\n", remaining_ms,
                       label.empty() ? 1 : static_cast<int>(label.size()),
                       label.empty() ? "-" : label.data());
}

struct RowLeases {
    std::FILE* out;
    std::uint32_t shown;
    std::uint32_t more;
};

void row_lease(void* ctx, std::string_view label, std::uint32_t /*remaining_ms*/) {
    auto* c = static_cast<RowLeases*>(ctx);
    if (c->shown == row_holders) {
        ++c->more;
        return;
    }
    (void)std::fprintf(c->out, "%s%.*s", c->shown == 0 ? "" : ",",
                       label.empty() ? 1 : static_cast<int>(label.size()),
                       label.empty() ? "-" : label.data());
    ++c->shown;
}

bool is_lock(const KeyView& view) {
    return view.kind == Kind::lock || view.kind == Kind::fair || view.kind == Kind::reentrant ||
           view.kind == Kind::semaphore;
}

}  // namespace

Status print_json(std::FILE* out, resplock::Connection& conn, std::string_view key,
                  const KeyView& view, std::uint32_t limit) {
    (void)std::fputs("{\"key\":", out);
    json_string(out, key);
    (void)std::fputs(",\"key_hex\":", out);
    if (valid_utf8(key)) {
        (void)std::fputs("null", out);
    } else {
        (void)std::fputc('"', out);
        hex_bytes(out, key);
        (void)std::fputc('"', out);
    }
    (void)std::fputs(",\"kind\":", out);
    if (is_lock(view)) {
        (void)std::fprintf(out, "\"%s\"", kind_name(view.kind));
    } else {
        (void)std::fputs("null", out);
    }
    const bool held = view.held();
    (void)std::fprintf(out, ",\"state\":\"%s\",\"remaining_ms\":", held ? "held" : "free");
    json_remaining(out, held ? view.pttl : -2);
    (void)std::fputs(",\"owner\":", out);
    json_label(out, held && view.has_owner ? view.owner : "");
    (void)std::fputs(",\"holders\":[", out);
    Status s = Status::ok;
    if (view.kind == Kind::semaphore && held) {
        JsonLeases leases{out, true};
        s = visit_leases(conn, key, &json_lease, &leases);
    } else if (held) {
        (void)std::fputs("{\"owner\":", out);
        json_label(out, view.has_owner ? view.owner : "");
        (void)std::fputs(",\"remaining_ms\":", out);
        json_remaining(out, view.pttl);
        (void)std::fputc('}', out);
    }
    (void)std::fprintf(out, "],\"count\":%u,\"limit\":", held ? view.count : 0U);
    if (limit != 0) {
        (void)std::fprintf(out, "%u", limit);
    } else {
        (void)std::fputs("null", out);
    }
    (void)std::fputs(",\"fence\":", out);
    if (view.has_fence) {
        (void)std::fprintf(out, "%llu", static_cast<unsigned long long>(view.fence));
    } else {
        (void)std::fputs("null", out);
    }
    (void)std::fprintf(out, ",\"waiters\":%u}\n", view.waiters);
    return s;
}

Status print_verbose(std::FILE* out, resplock::Connection& conn, std::string_view key,
                     const KeyView& view, std::uint32_t limit) {
    const bool held = view.held();
    (void)std::fputs("key ", out);
    (void)text_escaped(out, key);
    (void)std::fprintf(out, "\nkind %s\nstate %s\n", is_lock(view) ? kind_name(view.kind) : "-",
                       held ? "held" : "free");
    if (!held) {
        (void)std::fputs("remaining -\n", out);
    } else if (view.pttl >= 0) {
        (void)std::fprintf(out, "remaining %lld\n", static_cast<long long>(view.pttl));
    } else {
        (void)std::fputs("remaining forever\n", out);
    }
    (void)std::fprintf(out, "owner %s\n", held && view.has_owner ? view.owner : "-");
    (void)std::fprintf(out, "count %u\n", held ? view.count : 0U);
    if (limit != 0) (void)std::fprintf(out, "limit %u\n", limit);
    if (view.has_fence)
        (void)std::fprintf(out, "fence %llu\n", static_cast<unsigned long long>(view.fence));
    (void)std::fprintf(out, "waiters %u\n", view.waiters);
    if (view.kind == Kind::semaphore && held) return visit_leases(conn, key, &text_lease, out);
    return Status::ok;
}

void print_header(std::FILE* out) {
    (void)std::fprintf(out, "%-32s %-9s %10s %20s %7s %s\n", "KEY", "KIND", "REMAINING", "FENCE",
                       "WAITERS", "HOLDERS");
}

Status print_row(std::FILE* out, resplock::Connection& conn, std::string_view key,
                 const KeyView& view) {
    const std::size_t width = text_escaped(out, key);
    (void)std::fprintf(out, "%*s %-9s ", width < 32 ? static_cast<int>(32 - width) : 0, "",
                       kind_name(view.kind));
    const bool held = view.held();
    if (!held) {
        (void)std::fprintf(out, "%10s ", "-");
    } else if (view.pttl >= 0) {
        (void)std::fprintf(out, "%10lld ", static_cast<long long>(view.pttl));
    } else {
        (void)std::fprintf(out, "%10s ", "forever");
    }
    if (view.has_fence) {
        (void)std::fprintf(out, "%20llu ", static_cast<unsigned long long>(view.fence));
    } else {
        (void)std::fprintf(out, "%20s ", "-");
    }
    (void)std::fprintf(out, "%7u ", view.waiters);
    Status s = Status::ok;
    if (view.kind == Kind::semaphore && held) {
        RowLeases leases{out, 0, 0};
        s = visit_leases(conn, key, &row_lease, &leases);
        if (leases.more != 0) (void)std::fprintf(out, ",+%u", leases.more);
    } else if (held) {
        (void)std::fputs(view.has_owner ? view.owner : "-", out);
    } else {
        (void)std::fputc('-', out);
    }
    (void)std::fputc('\n', out);
    return s;
}

}  // namespace resplock_cli
