// inspect_key(), is_companion() and visit_leases() (see inspect.hpp).
#include "inspect.hpp"

#include <cstdio>
#include <cstring>

#include "resplock/core/companion.hpp"
#include "resplock/core/hold.hpp"
#include "resplock/core/resp.hpp"
#include "resplock/variants/semaphore.hpp"
#include "text.hpp"

namespace resplock_cli {

using resplock::Status;

namespace {

// KEYS: KEY, BASE:fence, BASE:q, BASE:w. ARGV[1]: the longest token. Returns {kind, PTTL, label
// or nil, fence or nil, queued, count}; {'other', PTTL} for a value no lock kind writes. The label
// is the text before a token's ':' ('' for a token without one), cut to 64 bytes: never the token.
constexpr const char inspect_script[] =
    "local k,r=KEYS,redis.call "
    "local m=tonumber(ARGV[1]) "
    "local function l(v) local i=string.find(v,':',1,true) "
    "if not i then return '' end return string.sub(v,1,math.min(i-1,64)) end "
    "local f=false "
    "if r('type',k[2]).ok=='string' and r('strlen',k[2])<=20 then f=r('get',k[2]) end "
    "local q=0 "
    "if r('type',k[3]).ok=='list' then q=r('llen',k[3]) end "
    "local y=r('type',k[1]).ok "
    "if y=='none' then return {'none',-2,false,f,q,0} end "
    "local p=r('pttl',k[1]) "
    "if y=='string' then "
    "if r('strlen',k[1])>m then return {'other',p} end "
    "local v=r('get',k[1]) "
    "if not (string.match(v,'^%x+$') or string.match(v,'^[^:]*:%x+$')) then return {'other',p} end "
    "local z='lock' if q>0 or r('exists',k[4])==1 then z='fair' end "
    "return {z,p,l(v),f,q,1} end "
    "if y=='hash' then "
    "if r('hexists',k[1],'')==0 or r('hlen',k[1])>2 then return {'other',p} end "
    "local h=r('hgetall',k[1]) "
    "for i=1,#h,2 do if h[i]~='' then return {'reentrant',p,l(h[i]),f,0,tonumber(h[i+1]) or 0} "
    "end end return {'other',p} end "
    "if y=='zset' then local t=r('time') "
    "local n=t[1]*1000+math.floor(t[2]/1000) "
    "return {'semaphore',p,false,f,q,r('zcount',k[1],'('..n,'+inf')} end "
    "return {'other',p}";

Kind kind_of(std::string_view name) {
    if (name == "lock") return Kind::lock;
    if (name == "fair") return Kind::fair;
    if (name == "reentrant") return Kind::reentrant;
    if (name == "semaphore") return Kind::semaphore;
    if (name == "none") return Kind::none;
    return Kind::other;
}

// A label as the output shows it: at most RESPLOCK_MAX_OWNER_LEN bytes, each byte no label may
// hold shown as '?'.
void clean_label(std::string_view label, char (&out)[RESPLOCK_MAX_OWNER_LEN + 1]) {
    std::size_t n = 0;
    for (; n < label.size() && n < RESPLOCK_MAX_OWNER_LEN; ++n)
        out[n] = resplock::owner_label_char(label[n]) ? label[n] : '?';
    out[n] = '\0';
}

bool to_count(const resplock::resp::Value& v, std::uint32_t& out) {
    if (!v.is(resplock::resp::Type::integer) || v.integer < 0) return false;
    out = v.integer > 0xffffffff ? 0xffffffffU : static_cast<std::uint32_t>(v.integer);
    return true;
}

bool to_fence(const resplock::resp::Value& v, std::uint64_t& out) {
    if (!v.is(resplock::resp::Type::bulk_string) || v.size == 0 || v.size > 20) return false;
    std::uint64_t n = 0;
    for (const char c : v.text()) {
        if (c < '0' || c > '9') return false;
        const auto d = static_cast<std::uint64_t>(c - '0');
        if (n > (UINT64_MAX - d) / 10) return false;
        n = n * 10 + d;
    }
    out = n;
    return true;
}

bool ends_with(std::string_view s, std::string_view suffix) {
    return s.size() >= suffix.size() && slice(s, s.size() - suffix.size()) == suffix;
}

// Whether `base` carries a hash tag: a '{' followed later by a '}' with something between.
bool has_tag(std::string_view base) {
    const std::size_t open = base.find('{');
    if (open == std::string_view::npos) return false;
    const std::size_t close = base.find('}', open + 1);
    return close != std::string_view::npos && close > open + 1;
}

struct LeaseCtx {
    LeaseVisit visit;
    void* ctx;
};

void lease_of(void* ctx, const resplock::SemaphoreHolder& holder) noexcept {
    const auto* c = static_cast<LeaseCtx*>(ctx);
    char label[RESPLOCK_MAX_OWNER_LEN + 1];
    clean_label(holder.owner, label);
    c->visit(c->ctx, label, holder.remaining_ms);
}

}  // namespace

const char* kind_name(Kind kind) {
    switch (kind) {
        case Kind::lock:
            return "lock";
        case Kind::fair:
            return "fair";
        case Kind::reentrant:
            return "reentrant";
        case Kind::semaphore:
            return "semaphore";
        case Kind::none:
            return "none";
        case Kind::other:
            break;
    }
    return "other";
}

Status inspect_key(resplock::Connection& conn, std::string_view key, KeyView& view) {
    view = KeyView{};
    if (key.empty() || key.size() > RESPLOCK_MAX_KEY_LEN) return Status::invalid_argument;
    char base[RESPLOCK_MAX_KEY_LEN + resplock::companion_prefix_extra];
    const std::size_t n = resplock::companion_prefix(key, base);
    char fence[sizeof base + 8];
    char queue[sizeof base + 4];
    char entries[sizeof base + 4];
    const auto name = [&](char* out, std::size_t cap, const char* suffix) {
        const int len = std::snprintf(out, cap, "%.*s%s", static_cast<int>(n), base, suffix);
        return std::string_view(out, static_cast<std::size_t>(len));
    };
    char longest[24];
    const int longest_len = std::snprintf(longest, sizeof longest, "%zu", resplock::max_token_len);
    const std::string_view args[] = {"EVAL",
                                     inspect_script,
                                     "4",
                                     key,
                                     name(fence, sizeof fence, ":fence"),
                                     name(queue, sizeof queue, ":q"),
                                     name(entries, sizeof entries, ":w"),
                                     {longest, static_cast<std::size_t>(longest_len)}};
    resplock::resp::Reply reply;
    const Status s = conn.command(args, sizeof args / sizeof args[0], reply);
    if (s != Status::ok) return s;
    const resplock::resp::Value* v = reply.values;
    if (!reply.top().is(resplock::resp::Type::array) || reply.count < 2 ||
        !v[1].is(resplock::resp::Type::bulk_string)) {
        return Status::protocol_error;
    }
    view.kind = kind_of(v[1].text());
    if (view.kind == Kind::other) {
        // Someone's value: it holds KEY as a lock would, until it expires or is deleted.
        if (reply.count != 3 || !v[2].is(resplock::resp::Type::integer)) {
            return Status::protocol_error;
        }
        view.pttl = v[2].integer;
        view.count = 1;
        return Status::ok;
    }
    if (reply.count != 7 || !v[2].is(resplock::resp::Type::integer) ||
        !to_count(v[5], view.waiters) || !to_count(v[6], view.count)) {
        return Status::protocol_error;
    }
    view.pttl = v[2].integer;
    if (v[3].is(resplock::resp::Type::bulk_string) && v[3].size != 0) {
        clean_label(v[3].text(), view.owner);
        view.has_owner = true;
    }
    view.has_fence = to_fence(v[4], view.fence);
    return Status::ok;
}

bool is_companion(std::string_view key, std::string_view type) {
    struct Suffix {
        const char* text;
        const char* type;
    };
    static constexpr Suffix suffixes[] = {{":fence", "string"},
                                          {":once", "string"},
                                          {":wake", "list"},
                                          {":q", "list"},
                                          {":w", "hash"}};
    for (const Suffix& s : suffixes) {
        const std::string_view suffix(s.text);
        if (type == s.type && ends_with(key, suffix) &&
            has_tag(slice(key, 0, key.size() - suffix.size()))) {
            return true;
        }
    }
    // BASE:f:TOKEN, a fair waiter's wake list: the last ":f:" before a token.
    const std::size_t f = key.rfind(":f:");
    return type == "list" && f != std::string_view::npos && has_tag(slice(key, 0, f));
}

Status visit_leases(resplock::Connection& conn, std::string_view key, LeaseVisit visit, void* ctx) {
    resplock::Semaphore semaphore(conn, key, 1, false);
    LeaseCtx c{visit, ctx};
    return semaphore.holders(&lease_of, &c);
}

}  // namespace resplock_cli
