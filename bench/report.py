#!/usr/bin/env python3
"""Summarises bench/run.sh's raw measurements (`name value unit` lines): medians over the
interleaved rounds, ratios per round, instructions per cycle from two callgrind run lengths, and
the invariants. Prints a table for people, then `name value unit` lines for scripts.

  report.py RAW_FILE BUILD_DIR
  report.py --link LINK_RAW_FILE DELAYS_US KS STRATEGIES PEERS   (the link mode, part 6)
  report.py --scale SCALE_RAW_FILE CASES PEERS SWEEP [PEER_TOPOLOGIES]   (the scale mode, part 7;
                                          the peers' topologies default to "single")

Exits 1, with a line per cause, when a part left a figure out, or an invariant fails: heap
calls by resplock inside the measured loop (or a malloc counter that saw nothing from hiredis
either: it would not be counting at all), two holders at once in a hand-off run, more than N
holders at once in a run of the semaphore with N places, or an owner script whose digest run.sh
did not confirm. Timings and ratios are reported, never checked.
"""

import re
import statistics
import sys


CLIENTS = ("ours", "hiredis", "raw")
STRATEGIES = ("backoff", "poll", "wake", "fair")
# Run with every process trying again at once after its release: the spread per process.
SPREAD_STRATEGIES = ("backoff", "wake", "fair")
PROCESSES = (2, 4, 8)
# What resplock_bench handoff prints for each run.
HANDOFF_FIGURES = ("acquisitions", "exclusion_overlaps", "max_holders", "acq_per_s", "handoffs",
                   "same_process_reacquires", "handoff_median_ms", "handoff_p99_ms",
                   "requests_per_acq", "set_per_acq", "pttl_per_acq", "script_per_acq",
                   "blpop_per_acq", "acquire_requests_per_acq", "worker_acq_min",
                   "worker_acq_max", "server_us_per_script")
LIBRARIES = ("resplock", "resplock_posix", "hiredis")
# The semaphore's cases (kind, N places; 2N processes), in the order run.sh runs them: the fair
# lock with 2 processes is the N = 1 baseline. Each case runs in both passes: hand-off (a process
# rejoins once another acquired after its release) and spread (it tries again at once).
SEMAPHORE_CASES = (("fairlock", 1), ("plain", 1), ("fair", 1), ("plain", 4), ("fair", 4),
                   ("plain", 16), ("fair", 16))
SEMAPHORE_PASSES = ("handoff", "spread")
SEMAPHORE_FIGURES = HANDOFF_FIGURES + ("limit", "max_holders_recorded")


def expected(v):
    """(part, name) of every figure a complete run records."""
    names = [("owner script", "script.digest_match"), ("1/5 cycle rate", "plan.rounds")]
    rounds = int(float(v["plan.rounds"][0])) if "plan.rounds" in v else 0
    for r in range(1, rounds + 1):
        names += [("1/5 cycle rate", f"round{r}.{k}")
                  for k in CLIENTS + tuple(f"{c}.server" for c in CLIENTS)
                  + ("limit_set", "limit_evalsha", "limit.server")]
    names += [("2/5 instructions", "callgrind.short"), ("2/5 instructions", "callgrind.long")]
    if "callgrind.short" in v and "callgrind.long" in v:
        for c in ("ours", "hiredis", "raw"):
            for n in (v["callgrind.short"][0], v["callgrind.long"][0]):
                names.append(("2/5 instructions", f"callgrind.{c}.{n}"))
    for s in STRATEGIES:
        for k in PROCESSES:
            names += [("3/5 hand-off", f"handoff.{s}.k{k}.{f}") for f in HANDOFF_FIGURES]
    for s in SPREAD_STRATEGIES:
        for k in PROCESSES:
            names += [("3/5 hand-off", f"spread.{s}.k{k}.{f}") for f in HANDOFF_FIGURES]
    names += [("3/5 hand-off", "idle_rtt.median_us"),
              ("3/5 hand-off", "idle_rtt.fair_release_median_us")]
    for p in SEMAPHORE_PASSES:
        for kind, n in SEMAPHORE_CASES:
            names += [("3/5 hand-off", f"semaphore.{p}.{kind}.n{n}.{f}")
                      for f in SEMAPHORE_FIGURES]
    if "cortex_m4.skipped" not in v:
        names += [("4/5 footprint", f"cortex_m4.{k}")
                  for k in ("core_flash", "core_ram", "core_stack_worst",
                            "stack.Lock::try_acquire/2", "firmware_c_api.flash")]
    for lib in LIBRARIES:
        names += [("4/5 footprint", f"x86_64.{lib}.file"), ("4/5 footprint", f"x86_64.{lib}.code")]
    names += [("5/5 heap calls", f"heap.{c}.{k}") for c in ("ours", "hiredis")
              for k in ("allocs", "frees")]
    names.append(("5/5 heap calls", "heap.cycles"))
    return names


def missing_figures(v):
    """Lines naming each figure a complete run has and this one lacks (or holds no number of)."""
    lines = []
    if "plan.rounds" in v and int(float(v["plan.rounds"][0])) < 1:
        lines.append("1/5 cycle rate: no round planned")
    for part, name in expected(v):
        try:
            float(v[name][0])
        except (KeyError, ValueError):
            lines.append(f"{part}: no figure {name}")
    # A part that ran yields work done: something other than nothing.
    for name, value in v.items():
        if re.match(r"round\d+\.(ours|hiredis|raw|limit_set|limit_evalsha)$", name) or \
                re.match(r"(handoff|spread|semaphore)\..*\.(acquisitions|handoffs)$", name):
            try:
                if float(value[0]) <= 0:
                    lines.append(f"{name} is {value[0]}: that run did no work")
            except ValueError:
                pass
    if not lines and "callgrind.short" in v:
        for c in ("ours", "hiredis", "raw"):
            a = float(v[f"callgrind.{c}.{v['callgrind.short'][0]}"][0])
            b = float(v[f"callgrind.{c}.{v['callgrind.long'][0]}"][0])
            if b <= a:
                lines.append(f"2/5 instructions: {c}: the longer run counted no more instructions"
                             f" ({b:.0f} <= {a:.0f})")
    return lines


def load(path):
    values = {}
    with open(path) as f:
        for line in f:
            parts = line.split()
            if len(parts) >= 2:
                values[parts[0]] = (parts[1], parts[2] if len(parts) > 2 else "-")
    return values


ANNOTATE_LINE = re.compile(r"^\s*([\d,]+) \(\s*[\d.]+%\)\s+(.+?)\s*$")


def function_costs(path):
    """Ir per function from a callgrind_annotate listing."""
    costs = {}
    with open(path) as f:
        for line in f:
            m = ANNOTATE_LINE.match(line)
            if not m or "PROGRAM TOTALS" in m.group(2):
                continue
            where = re.sub(r" \[[^\]]*\]$", "", m.group(2))  # drop the [object]
            name = where.split(":", 1)[1] if ":" in where else where
            name = re.sub(r"(?<=\w)\(.*\)", "()", name)  # drop parameter lists
            name = name.replace("std::basic_string_view<char, std::char_traits<char> >", "sv")
            costs[name] = costs.get(name, 0) + int(m.group(1).replace(",", ""))
    return costs


# The layer a function of ours belongs to, from its name (the -O2 build has no file names).
LAYERS = (
    (r"^resplock::resp::", "codec (encoder, parser)"),
    (r"^resplock::Connection::", "connection"),
    (r"^resplock::(Lock|Validity|Deadline|detail)::", "lock (token, script, validity)"),
    (r"^(posix_|\(anonymous namespace\)::)", "POSIX port"),
    (r"^(__|_?[a-z_]+$|[a-z_]+@)", "C library (system call wrappers, clock, memcpy)"),
)


def layer_of(function):
    for pattern, name in LAYERS:
        if re.search(pattern, function):
            return name
    return "other (the bench's own loop)"


def target(value, limit, unit):
    """A figure's target and whether it is met (at most `limit`), e.g. "target <= 1000: met"."""
    verdict = "met" if value <= limit else f"missed by {value - limit:.0f} {unit}"
    return f"target <= {limit}: {verdict}"


# The link mode (part 6): what resplock_bench handoff / records print for each case.
LINK_FIGURES = ("acquisitions", "exclusion_overlaps", "max_holders", "max_holders_recorded",
                "acq_per_s", "handoffs", "handoff_median_ms", "handoff_p99_ms",
                "requests_per_acq", "acquire_requests_per_acq", "worker_acq_min",
                "worker_acq_max")
PING_FIGURES = ("median_us", "p99_us", "min_us", "max_us")
PROXY_FIGURES = ("chunks", "late_median_us", "late_p99_us", "late_max_us")
LINK_LABELS = {
    "resplock.backoff": "resplock try_acquire backoff",
    "resplock.wake": "resplock try_acquire + wake",
    "resplock.fair": "resplock FairLock",
    "redlock5.defaults": "redlock 5.0.0-beta.2, defaults",
    "redlock5.tuned": "redlock 5.0.0-beta.2, tuned",
    "redlock4.defaults": "redlock 4.2.0, defaults",
    "redlock4.tuned": "redlock 4.2.0, tuned",
    "mutex.defaults": "redis-semaphore Mutex, defaults",
    "mutex.tuned": "redis-semaphore Mutex, tuned",
    "pubsub.imitation": "pub/sub wake (our imitation)",
}


def link_main(args):
    """The link mode's table and checks. args: raw file, then the plan as run.sh ran it (delays in
    us, K values, resplock strategies, peer:setting specs; each a space-separated list)."""
    raw, delays, ks, strategies, peers = args[0], args[1].split(), args[2].split(), \
        args[3].split(), args[4].split()
    v = load(raw)
    cases = [f"resplock.{s}" for s in strategies] + [p.replace(":", ".") for p in peers]
    missing = []
    names = ["link.direct.ping." + f for f in PING_FIGURES]
    for d in delays:
        names += [f"link.d{d}.ping.{f}" for f in PING_FIGURES]
        names += [f"link.d{d}.ping_after.{f}" for f in PING_FIGURES]
        names += [f"link.d{d}.proxy.{f}" for f in PROXY_FIGURES]
        names += [f"link.d{d}.{c}.k{k}.{f}" for c in cases for k in ks for f in LINK_FIGURES]
    for name in names:
        try:
            float(v[name][0])
        except (KeyError, ValueError):
            missing.append(f"6/6 link: no figure {name}")
    for name, value in v.items():
        if re.match(r"link\..*\.(acquisitions|handoffs)$", name) and float(value[0]) <= 0:
            missing.append(f"{name} is {value[0]}: that run did no work")
    if missing:
        for line in missing:
            print(f"MISSING: {line}", file=sys.stderr)
        return 1

    def num(name):
        return float(v[name][0])

    out, failures = [], []
    secs = int(num("link.plan.seconds"))
    print(f"== 6. Hand-off over a link: our delay proxy adds D per direction; K contenders, one"
          f" key, hold {int(num('link.plan.hold'))} ms, {secs} s per case; a contender rejoins"
          f" once another holds")
    direct = {f: num(f"link.direct.ping.{f}") for f in PING_FIGURES}
    print(f"  no proxy: PING after 2 ms asleep, median {direct['median_us']:.1f} us,"
          f" p99 {direct['p99_us']:.1f}, {direct['min_us']:.1f}..{direct['max_us']:.1f}")
    for f in PING_FIGURES:
        out.append((f"link.direct.ping.{f}", f"{direct[f]:.1f}", "us"))
    if "link.peers.skipped" in v:
        print("  the Node peers were skipped (node or npm missing, or npm ci failed)")
    for d in delays:
        ping = {f: num(f"link.d{d}.ping.{f}") for f in PING_FIGURES}
        after = {f: num(f"link.d{d}.ping_after.{f}") for f in PING_FIGURES}
        proxy = {f: num(f"link.d{d}.proxy.{f}") for f in PROXY_FIGURES}
        rtt_ms = ping["median_us"] / 1000
        print()
        print(f"  D = {int(d) / 1000:g} ms: link round trip (PING through the proxy, after 2 ms"
              f" asleep) median {ping['median_us'] / 1000:.3f} ms, p99"
              f" {ping['p99_us'] / 1000:.3f}, {ping['min_us'] / 1000:.3f}..{ping['max_us'] / 1000:.3f}"
              f" (again after the cases: median {after['median_us'] / 1000:.3f}, p99"
              f" {after['p99_us'] / 1000:.3f}); 2 D = {2 * int(d) / 1000:g} ms")
        rt = v.get(f"link.d{d}.proxy.realtime", ("0",))[0] == "1"
        print(f"    the proxy wrote {proxy['chunks']:.0f} chunks, late after their due time by"
              f" median {proxy['late_median_us']:.0f} us, p99 {proxy['late_p99_us']:.0f},"
              f" most {proxy['late_max_us']:.0f}"
              + (" (under SCHED_FIFO)" if rt else " (no real-time priority: not permitted)"))
        for f in PING_FIGURES:
            out.append((f"link.d{d}.ping.{f}", f"{ping[f]:.1f}", "us"))
        for f in PROXY_FIGURES:
            out.append((f"link.d{d}.proxy.{f}", f"{proxy[f]:.0f}", "us" if "us" in f else "-"))
        print(f"    {'waiter':34} {'K':>2} {'acq/s':>6} {'median ms':>9} {'p99 ms':>8}"
              f" {'med RTT':>7} {'p99 RTT':>7} {'req/acq':>7} {'fewest':>6} {'most':>5}"
              f" {'gave up':>7}")
        for c in cases:
            for k in ks:
                q = f"link.d{d}.{c}.k{k}"
                medn, p99 = num(q + ".handoff_median_ms"), num(q + ".handoff_p99_ms")
                lo, hi = int(num(q + ".worker_acq_min")), int(num(q + ".worker_acq_max"))
                gave = int(num(q + ".gave_up")) if q + ".gave_up" in v else 0
                print(f"    {LINK_LABELS.get(c, c):34} {k:>2} {num(q + '.acq_per_s'):6.1f}"
                      f" {medn:9.2f} {p99:8.2f} {medn / rtt_ms:7.2f} {p99 / rtt_ms:7.2f}"
                      f" {num(q + '.requests_per_acq'):7.2f} {lo:6d} {hi:5d} {gave:7d}")
                for name, value, unit in (
                        ("acquisitions_per_s", f"{num(q + '.acq_per_s'):.1f}", "1/s"),
                        ("delay_median", f"{medn:.2f}", "ms"),
                        ("delay_p99", f"{p99:.2f}", "ms"),
                        ("delay_median_rtt", f"{medn / rtt_ms:.2f}", "link-round-trips"),
                        ("delay_p99_rtt", f"{p99 / rtt_ms:.2f}", "link-round-trips"),
                        ("requests_per_acquisition", f"{num(q + '.requests_per_acq'):.2f}",
                         "requests"),
                        ("fewest", str(lo), "acquisitions"), ("most", str(hi), "acquisitions"),
                        ("gave_up", str(gave), "calls")):
                    out.append((f"{q}.{name}", value, unit))
                over, live = int(num(q + ".exclusion_overlaps")), int(num(q + ".max_holders"))
                rec = int(num(q + ".max_holders_recorded"))
                if over != 0 or live != 1 or rec != 1:
                    failures.append(f"{q}: {over} acquisitions returned before the earlier holder"
                                    f" sent its release, {live} holders at once counted live,"
                                    f" {rec} in the recorded intervals")
    print()
    print("  median / p99 ms: from the first byte of a holder's release request sent to the next"
          " holder's acquiring call returned, one monotonic clock; RTT: those in link round trips"
          " (the PING median above, same run); req/acq: requests counted by the server (INFO"
          " commandstats) per acquisition, release included; fewest / most: acquisitions of one"
          " contender; gave up: acquiring calls that gave up and were called again")
    print()
    print("== Invariants of the link mode")
    total = sum(int(num(f"link.d{d}.{c}.k{k}.acquisitions")) for d in delays for c in cases
                for k in ks)
    checks = [(not failures, f"mutual exclusion through the proxy: {total} acquisitions in"
                             f" {len(delays) * len(cases) * len(ks)} runs, none while another"
                             " held" + (f" (broken: {'; '.join(failures)})" if failures else ""))]
    if peers:
        checks.append((int(num("link.clock.node_between_monotonic")) == 1,
                       "one clock: Node's process.hrtime.bigint() read between two readings of"
                       " CLOCK_MONOTONIC"))
    for ok, text in checks:
        print(f"  {'ok    ' if ok else 'FAILED'}  {text}")
    print()
    for name, value, unit in out:
        print(f"{name} {value} {unit}")
    bad = [t for ok, t in checks if not ok]
    for t in bad:
        print(f"INVARIANT FAILED: {t}", file=sys.stderr)
    return 1 if bad else 0



# The scale mode's goals (reported next to the figures, never checked: timings depend on the
# machine); the invariants (0 overlaps, at most N holders, acquisitions) are checked.
SCALE_GOAL_REQUESTS = 2.05  # acquisition requests per acquisition
SCALE_GOAL_CPU = 1.5  # server CPU per acquisition / the uncontended acquire + release's
SCALE_GOAL_SPREAD = 10.0  # % between the most and the fewest acquisitions of a key's devices
SCALE_PEER_NAMES = {
    "redlock5": "redlock 5 (tuned)",
    "mutex": "redis-semaphore Mutex (tuned)",
    "pubsub": "pub/sub imitation",
    "semaphore": "redis-semaphore Semaphore N=10",
}


def scale_main(args):
    raw_file, cases, peers, sweep = args[:4]
    peer_topos = args[4].split() if len(args) > 4 else ["single"]
    values = {}
    with open(raw_file) as f:
        for line in f:
            parts = line.split()
            if len(parts) >= 2:
                values[parts[0]] = float(parts[1])
    failures = []

    def num(name):
        if name not in values:
            failures.append(f"MISSING: {name}")
            return float("nan")
        return values[name]

    devices = int(num("scale.plan.devices"))
    keys = int(num("scale.plan.keys"))
    sem_keys = int(num("scale.plan.sem_keys"))
    seconds = int(num("scale.plan.seconds"))
    rows = []
    for spec in cases.split():
        topo, kind = spec.split(":")
        label = {"fair": "resplock FairLock", "lock": "resplock Lock",
                 "sem": "resplock Semaphore N=10", "fairsem": "resplock Semaphore N=10 fair"}
        rows.append((f"{topo:7} {label[kind]}", f"scale.{topo}.resplock.{kind}.", kind))
    for topo in peer_topos:
        for peer in peers.split():
            rows.append((f"{topo:7} {SCALE_PEER_NAMES.get(peer, peer)}", f"scale.{topo}.{peer}.",
                         "sem" if peer == "semaphore" else "lock"))
    print(f"   Scale: {devices} devices (one connection each), {keys} keys for the locks and"
          f" {sem_keys} for the semaphore, hold 5 ms, {seconds} s per case")
    def command_us(p):
        return sum(v for k, v in values.items() if k.startswith(p + "server_us_per_acq."))

    print(f"{'case':46} {'acq/s':>7} {'acq req':>7} {'CPU us':>7} {'x unc':>5} {'cmd us':>6} {'p50 ms':>7}"
          f" {'p99 ms':>7} {'spread':>7} {'overlap':>7}")
    for label, p, kind in rows:
        unc = values.get(p + "server_cpu_vs_uncontended")
        over = num(p + "exclusion_overlaps")
        if over != 0:
            failures.append(f"INVARIANT FAILED: {label.strip()}: {int(over)} overlapping holds")
        spread = num(p + "spread_worst_pct")
        print(f"{label:46} {num(p + 'acq_per_s'):7.0f} {num(p + 'acquire_requests_per_acq'):7.2f}"
              f" {num(p + 'server_cpu_us_per_acq'):7.1f} {'' if unc is None else f'{unc:5.2f}':>5}"
              f" {command_us(p):6.1f}"
              f" {num(p + 'handoff_p50_ms'):7.2f} {num(p + 'handoff_p99_ms'):7.2f}"
              f" {'inf' if spread >= 1e8 else f'{spread:.0f}%':>7} {int(over):7d}")
    print("  acq req: requests of the acquisitions per acquisition (every request the server counted"
          " of the client's kinds, less one release each); CPU us: the servers' used_cpu_sys +"
          " used_cpu_user over the run per acquisition; x unc: that over an uncontended acquire +"
          " release of the same kind, measured in the same run; cmd us: the request commands' own"
          " time (commandstats usec) per acquisition; spread: the worst key's (most -"
          " fewest) / fewest acquisitions of its devices")

    # The goals, for each resplock case at this device count.
    print()
    print("   Goals (reported, never checked)")
    verdict = lambda ok: "met" if ok else "MISSED"
    for label, p, kind in rows:
        if ".resplock." not in p:
            continue
        req = num(p + "acquire_requests_per_acq")
        unc = num(p + "server_cpu_vs_uncontended")
        spread = num(p + "spread_worst_pct")
        over = num(p + "exclusion_overlaps")
        topo = p.split(".")[1]
        peer_rows = [r for r in rows if ".resplock." not in r[1] and r[1].split(".")[1] == topo
                     and (r[2] == "sem") == (kind in ("sem", "fairsem"))]
        ahead = []
        for plabel, pp, _ in peer_rows:
            behind = [name for name, ok in (
                ("acq/s", num(p + "acq_per_s") > num(pp + "acq_per_s")),
                ("requests", req < num(pp + "acquire_requests_per_acq")),
                ("CPU", num(p + "server_cpu_us_per_acq") < num(pp + "server_cpu_us_per_acq")),
                ("p50", num(p + "handoff_p50_ms") < num(pp + "handoff_p50_ms")),
                ("p99", num(p + "handoff_p99_ms") < num(pp + "handoff_p99_ms")),
                ("spread", spread < num(pp + "spread_worst_pct")
                 or spread == num(pp + "spread_worst_pct") < 1e8)) if not ok]
            ahead.append(f"{plabel.split(None, 1)[1]}: "
                         + ("ahead on all" if not behind else "NOT ahead on " + ", ".join(behind)))
        spread_text = "inf (a device got none)" if spread >= 1e8 else f"{spread:.1f}%"
        print(f"  {label.strip()}: {req:.2f} acquisition requests (<= {SCALE_GOAL_REQUESTS}:"
              f" {verdict(req <= SCALE_GOAL_REQUESTS)}), server CPU {unc:.2f}x uncontended (<="
              f" {SCALE_GOAL_CPU}: {verdict(unc <= SCALE_GOAL_CPU)}; the uncontended cycle"
              f" {values.get(p + 'uncontended_server_cpu_us_per_cycle_before', float('nan')):.0f}"
              f" us before the devices,"
              f" {values.get(p + 'uncontended_server_cpu_us_per_cycle_after', float('nan')):.0f}"
              f" after), spread {spread_text} (<="
              f" {SCALE_GOAL_SPREAD:.0f}%: {verdict(spread <= SCALE_GOAL_SPREAD)}), overlaps"
              f" {int(over)} (0: {verdict(over == 0)})" + ("; " + "; ".join(ahead) if ahead else ""))

    # Where the fair kinds' server time goes, against the uncontended cycle's.
    split_rows = [r for r in rows if ".resplock." in r[1] and r[2] in ("fair", "fairsem")]
    if split_rows:
        print()
        print("   Server time per acquisition by command (INFO commandstats), against the"
              " uncontended acquire + release of the same kind")
    for label, p, kind in split_rows:
        def part(prefix, name, unit):
            return values.get(f"{p}{prefix}.{name}.{unit}", 0.0)
        names = sorted({k[len(p):].split(".")[1] for k in values
                        if k.startswith(p + "split.") or k.startswith(p + "unc.")})
        top = ("evalsha", "eval", "blpop")
        cpu = num(p + "server_cpu_us_per_acq")
        unc = num(p + "uncontended_server_cpu_us_per_cycle")
        print(f"  {label.strip()}: server CPU {cpu:.1f} us per acquisition, {unc:.1f} per"
              f" uncontended cycle ({cpu / unc:.2f}x; the goal, 1.5x, is {1.5 * unc:.1f} us)")
        print(f"    {'command':16} {'calls/acq':>9} {'us/call':>8} {'us/acq':>7} {'calls/cyc':>9}"
              f" {'us/call':>8} {'us/cyc':>7} {'acq-cyc':>7}")
        for name in names:
            c_calls, c_call, c_us = (part("split", name, u)
                                     for u in ("calls_per_acq", "us_per_call", "us_per_acq"))
            u_calls, u_call, u_us = (part("unc", name, u)
                                     for u in ("calls_per_cycle", "us_per_call", "us_per_cycle"))
            if c_us < 0.05 and u_us < 0.05:
                continue
            print(f"    {name + ('' if name in top else ' (in scripts)'):16} {c_calls:9.3f}"
                  f" {c_call:8.2f} {c_us:7.2f} {u_calls:9.3f} {u_call:8.2f} {u_us:7.2f}"
                  f" {c_us - u_us:+7.2f}")
        def sums(prefix, unit):
            scripts = sum(part(prefix, n, unit) for n in ("evalsha", "eval"))
            inside = sum(part(prefix, n, unit) for n in names if n not in top)
            return scripts - inside, inside, part(prefix, "blpop", unit)
        c_lua, c_in, c_bl = sums("split", "us_per_acq")
        u_lua, u_in, u_bl = sums("unc", "us_per_cycle")
        c_out = num(p + "server_us_outside_requests_per_acq")
        # The client's requests in the cycle are EVALSHA (EVAL on a miss); the SET and PTTL
        # lines are the scripts' own calls.
        u_out = unc - sum(part("unc", n, "us_per_cycle") for n in top)
        parts = (("the scripts' Lua (EVALSHA's time less its commands')", c_lua, u_lua),
                 ("the commands the scripts call", c_in, u_in),
                 ("BLPOP", c_bl, u_bl),
                 ("outside the requests' own time (reading, parsing and answering them, blocking"
                  " and waking clients, the event loop and timers)", c_out, u_out))
        for text, c, u in parts:
            print(f"    {text}: {c:.1f} us per acquisition, {u:.1f} per uncontended cycle"
                  f" ({c - u:+.1f}; {c - 1.5 * u:+.1f} over 1.5x its cycle share)")
        print(f"    calls per acquisition: EVALSHA {part('split', 'evalsha', 'calls_per_acq'):.3f},"
              f" BLPOP {part('split', 'blpop', 'calls_per_acq'):.3f}; per uncontended cycle"
              f" EVALSHA {part('unc', 'evalsha', 'calls_per_cycle'):.3f}")

    # What limits the count here, and what each device costs.
    print()
    print("   What the run cost: client (this program), servers, machine; memory per device")
    for label, p, kind in rows:
        if ".resplock." not in p:
            rss = values.get(p + "client_rss_bytes_per_device")
            cpu = values.get(p + "client_cpu_pct")
            conns = values.get(p + "server_connections_per_device")
            mem = values.get(p + "server_memory_bytes_per_device")
            servers = int(values.get(p + "servers", 1))
            where = ""
            if conns is not None and servers > 1:
                where = " (per master: " + "/".join(
                    f"{values.get(f'{p}server{i}_connections', float('nan')):.0f}"
                    for i in range(servers)) + ")"
            print(f"  {label.strip()}: client CPU {cpu:.0f}% of a core, RSS {rss:.0f} bytes per device"
                  f" (Node + ioredis), server CPU {num(p + 'server_cpu_pct'):.0f}% of a core"
                  + ("" if conns is None else f"; per device: server {mem:.0f} bytes and"
                     f" {conns:.2f} connections{where} at the start,"
                     f" {values.get(p + 'server_connections_per_device_at_end', float('nan')):.2f}"
                     " at the end"))
            continue
        print(f"  {label.strip()}: client CPU {num(p + 'client_cpu_pct'):.0f}% of a core"
              f" ({num(p + 'client_cpu_us_per_acq'):.0f} us and"
              f" {num(p + 'client_switches_per_acq'):.1f} context switches per acquisition),"
              f" servers {num(p + 'server_cpu_pct'):.0f}% of a core, machine"
              f" {num(p + 'machine_busy_pct'):.0f}% busy of {int(num(p + 'machine_cpus'))} CPUs;"
              f" per device: library objects {int(num(p + 'library_bytes_per_device'))} bytes"
              f" (buffer {int(num(p + 'buffer_bytes_per_device'))}), client RSS"
              f" {num(p + 'client_rss_bytes_per_device'):.0f} bytes (thread stack included),"
              f" server {num(p + 'server_memory_bytes_per_device'):.0f} bytes and"
              f" {num(p + 'server_connections_per_device'):.2f} connections"
              + (" (devices per master: " + "/".join(
                  f"{values[f'{p}server{i}_devices']:.0f}" for i in range(int(num(p + "servers")))
                  if f"{p}server{i}_devices" in values) + ")" if num(p + "servers") > 1 else ""))

    if "cluster" in peer_topos and peers.split():
        print("  The peers on the cluster: one ioredis Cluster client per device. It does not hold a"
              " connection to each master: it opens one to a master when it first sends it a"
              " command, here its ready check (CLUSTER INFO, to a master of its choice) and the"
              " device's key (a PTTL before the start), plus the imitation's subscriber"
              " connection; so a device holds 1 to 3 connections, counted above from the masters'"
              " INFO (resplock's device: 1, to its key's master)")

    # The sweep: where this machine stops keeping up.
    if sweep.split():
        print()
        print("   Sweep: the fair lock on one server, 10 devices per key; a key's ceiling is one"
              " acquisition per hold + hand-off (5 ms + the idle hand-off: ~190/s)")
        print(f"{'devices':>8} {'acq/s':>7} {'per key':>7} {'p50 ms':>7} {'p99 ms':>7} {'spread':>7}"
              f" {'acq req':>7} {'srv CPU':>7} {'cli CPU':>7} {'machine':>7}")
        for n in sweep.split():
            p = f"scale.sweep.d{n}."
            print(f"{int(n):8d} {num(p + 'acq_per_s'):7.0f}"
                  f" {num(p + 'acq_per_s') / num(p + 'keys'):7.1f} {num(p + 'handoff_p50_ms'):7.2f}"
                  f" {num(p + 'handoff_p99_ms'):7.2f} {num(p + 'spread_worst_pct'):6.1f}%"
                  f" {num(p + 'acquire_requests_per_acq'):7.2f} {num(p + 'server_cpu_pct'):6.0f}%"
                  f" {num(p + 'client_cpu_pct'):6.0f}% {num(p + 'machine_busy_pct'):6.0f}%")
        print("  srv CPU, cli CPU: % of one core; machine: busy share of all CPUs over the case"
              " (other work on the machine included)")

    # On paper: 10,000 and 100,000 devices, from the per-device figures of the fair lock.
    for topo in ("single", "cluster"):
        base = f"scale.{topo}.resplock.fair."
        if base + "acq_per_s" not in values:
            continue
        mem = num(base + "server_memory_bytes_per_device")
        cpu = num(base + "server_cpu_us_per_acq")
        unc = num(base + "uncontended_server_cpu_us_per_cycle")
        cmd = command_us(base)
        rate = num(base + "acq_per_s") / num(base + "keys")
        servers = int(num(base + "servers"))
        print()
        print(f"   On paper, from the fair lock's {topo} case: {mem:.0f} bytes of server memory per"
              f" connection (used_memory), {cpu:.1f} us of server CPU per acquisition here"
              f" ({cpu / unc:.2f} uncontended cycles; the commands' own time {cmd:.1f} us),"
              f" {rate:.0f} acquisitions per s per key with 10 devices on it")
        for n in (10000, 100000):
            acq = n / 10 * rate
            print(f"  {n} devices on {n // 10} keys: {n} connections ({n // servers} per server over"
                  f" {servers}), {n * mem / 2**20:.0f} MiB of server memory for them, {acq:.0f}"
                  f" acquisitions per s needing {acq * cpu / 1e6:.1f} cores at this machine's CPU"
                  f" per acquisition ({acq * cmd / 1e6:.1f} cores of the commands' own time,"
                  f" {acq * unc / 1e6:.1f} at an uncontended cycle's CPU each)")

    print()
    for name, value in sorted(values.items()):
        print(f"{name} {value:g}")
    for line in failures:
        print(line)
    return 1 if failures else 0


def main():
    if len(sys.argv) == 7 and sys.argv[1] == "--link":
        return link_main(sys.argv[2:])
    if len(sys.argv) in (6, 7) and sys.argv[1] == "--scale":
        return scale_main(sys.argv[2:])
    if len(sys.argv) != 3:
        print(__doc__, file=sys.stderr)
        return 64
    raw, build = sys.argv[1], sys.argv[2]
    v = load(raw)
    missing = missing_figures(v)
    if missing:
        for line in missing:
            print(f"MISSING: {line}", file=sys.stderr)
        return 1

    def num(name):
        return float(v[name][0])

    out = []  # (name, value, unit)
    failures = []

    def emit(name, value, unit, fmt="{:.0f}"):
        out.append((name, fmt.format(value) if isinstance(value, float) else str(value), unit))
        return value

    print("== 1. Uncontended acquire + release, one connection (medians of interleaved rounds)")
    rounds = sorted({int(m.group(1)) for k in v for m in [re.match(r"round(\d+)\.", k)] if m})
    per = {"ours": [], "hiredis": [], "raw": [], "limit": [], "set": [], "evalsha": []}
    ratio_limit, ratio_hiredis, ratio_raw = [], [], []
    server = {"ours": [], "hiredis": [], "raw": [], "limit": []}
    for r in rounds:
        ours, hired, raw_ = num(f"round{r}.ours"), num(f"round{r}.hiredis"), num(f"round{r}.raw")
        s, e = num(f"round{r}.limit_set"), num(f"round{r}.limit_evalsha")
        limit = 1.0 / (1.0 / s + 1.0 / e)
        for key, val in (("ours", ours), ("hiredis", hired), ("raw", raw_), ("limit", limit),
                         ("set", s), ("evalsha", e)):
            per[key].append(val)
        ratio_limit.append(ours / limit)
        ratio_hiredis.append(ours / hired)
        ratio_raw.append(ours / raw_)
        for key in server:
            server[key].append(num(f"round{r}.{key}.server"))
    med = {k: statistics.median(x) for k, x in per.items()}
    rl, rh = statistics.median(ratio_limit), statistics.median(ratio_hiredis)
    rr = statistics.median(ratio_raw)
    rtt_us = 1e6 / med["ours"] / 2
    print(f"{'client':44} {'cycles/s':>10} {'us/cycle':>9} {'server us':>9}")
    rows = (
        ("resplock (Connection + Lock, POSIX port)", med["ours"], statistics.median(server["ours"])),
        ("hiredis 0.14 (redisCommand SET + EVALSHA)", med["hiredis"],
         statistics.median(server["hiredis"])),
        ("limit: redis-benchmark -c 1 -P 1, SET+EVALSHA", med["limit"],
         statistics.median(server["limit"])),
        ("floor: pre-encoded requests, blocking socket", med["raw"],
         statistics.median(server["raw"])),
    )
    for name, rate, srv in rows:
        print(f"{name:44} {rate:10.0f} {1e6 / rate:9.1f} {srv:9.2f}")
    print(f"  redis-benchmark alone: SET NX PX {med['set']:.0f} ops/s, "
          f"EVALSHA {med['evalsha']:.0f} ops/s ({len(rounds)} rounds)")
    print(f"  ours / floor {rr:.3f} (target >= 1)   ours / hiredis {rh:.3f} (target > 1)"
          f"   ours / limit {rl:.3f}")
    print(f"  per-round ours/limit: {' '.join(f'{x:.3f}' for x in ratio_limit)}")
    emit("cycle.ours", med["ours"], "cycles/s")
    emit("cycle.hiredis", med["hiredis"], "cycles/s")
    emit("cycle.limit", med["limit"], "cycles/s")
    emit("cycle.limit.set", med["set"], "ops/s")
    emit("cycle.limit.evalsha", med["evalsha"], "ops/s")
    emit("cycle.ratio.ours_limit", rl, "ratio", "{:.3f}")
    emit("cycle.ratio.ours_hiredis", rh, "ratio", "{:.3f}")
    emit("cycle.raw", med["raw"], "cycles/s")
    emit("cycle.ratio.ours_raw", rr, "ratio", "{:.3f}")
    emit("cycle.round_trip", rtt_us, "us", "{:.1f}")
    for key in server:
        emit(f"cycle.server.{key}", statistics.median(server[key]), "us/cycle", "{:.2f}")
    emit("cycle.rounds", len(rounds), "rounds")

    print()
    print("== 2. User-space instructions per cycle (callgrind Ir, start-up subtracted)")
    short, long_ = int(num("callgrind.short")), int(num("callgrind.long"))
    ir = {}
    for client in ("ours", "hiredis", "raw"):
        ir[client] = (num(f"callgrind.{client}.{long_}") - num(f"callgrind.{client}.{short}")) / (
            long_ - short)
        emit(f"instructions.{client}", ir[client], "Ir/cycle")
    # No target: the cycle already costs what the pre-encoded floor client's does on the server
    # and the link; the figure is reported so that it does not grow unseen.
    print(f"resplock {ir['ours']:.0f} Ir/cycle   hiredis"
          f" {ir['hiredis']:.0f} Ir/cycle   ratio {ir['hiredis'] / ir['ours']:.1f}x")
    print(f"floor: pre-encoded requests, blocking socket {ir['raw']:.0f} Ir/cycle (two send and two"
          " recv calls, replies compared byte for byte)")
    for client in ("ours", "hiredis"):
        a = function_costs(f"{build}/callgrind.{client}.{short}.txt")
        b = function_costs(f"{build}/callgrind.{client}.{long_}.txt")
        diff = {f: (b.get(f, 0) - a.get(f, 0)) / (long_ - short) for f in set(a) | set(b)}
        if client == "ours":
            layers = {}
            for f, c in diff.items():
                layers[layer_of(f)] = layers.get(layer_of(f), 0) + c
            print("  where ours' instructions go, by layer (Ir/cycle, self cost):")
            for name, c in sorted(layers.items(), key=lambda kv: -kv[1]):
                if round(c) != 0:
                    print(f"    {c:7.0f}  {name}")
                    emit(f"instructions.ours.{name.split(' ')[0]}", c, "Ir/cycle")
        top = sorted(diff.items(), key=lambda kv: -kv[1])[:10 if client == "ours" else 5]
        print(f"  where {client}' instructions go (Ir/cycle, self cost):")
        for f, c in top:
            print(f"    {c:7.0f}  {f[:90]}")

    print()
    print("== 3. Contended hand-off: K processes, one key, hold 5 ms; a process rejoins once"
          " another holds")
    print(f"{'waiter':34} {'K':>2} {'acq/s':>7} {'median ms':>10} {'p99 ms':>8}"
          f" {'med RTTs':>9} {'req/acq':>8} {'SET/acq':>8} {'PTTL/acq':>9} {'BLPOP/acq':>10}")
    for strategy, label in (("backoff", "resplock try_acquire backoff"),
                            ("poll", "poll: acquire, sleep 100 ms"),
                            ("wake", "resplock try_acquire + wake"),
                            ("fair", "resplock FairLock, hand-off")):
        for k in (2, 4, 8):
            p = f"handoff.{strategy}.k{k}."
            acq, medn, p99 = num(p + "acq_per_s"), num(p + "handoff_median_ms"), num(
                p + "handoff_p99_ms")
            req, sets, pttl = num(p + "requests_per_acq"), num(p + "set_per_acq"), num(
                p + "pttl_per_acq")
            blpop = num(p + "blpop_per_acq")
            print(f"{label:34} {k:2d} {acq:7.1f} {medn:10.2f} {p99:8.2f}"
                  f" {medn * 1000 / rtt_us:9.1f} {req:8.2f} {sets:8.2f} {pttl:9.2f} {blpop:10.2f}")
            q = f"handoff.{strategy}.k{k}"
            emit(f"{q}.acquisitions_per_s", acq, "1/s", "{:.1f}")
            emit(f"{q}.delay_median", medn, "ms", "{:.2f}")
            emit(f"{q}.delay_p99", p99, "ms", "{:.2f}")
            emit(f"{q}.delay_median_rtt", medn * 1000 / rtt_us, "round-trips", "{:.1f}")
            emit(f"{q}.requests_per_acquisition", req, "requests", "{:.2f}")
            emit(f"{q}.handoffs", int(num(p + "handoffs")), "count")
    idle_us = num("idle_rtt.median_us")
    emit("idle_rtt", idle_us, "us", "{:.1f}")
    for k in (2, 4, 8):
        medn = num(f"handoff.wake.k{k}.handoff_median_ms")
        emit(f"handoff.wake.k{k}.delay_median_idle_rtt", medn * 1000 / idle_us, "round-trips",
             "{:.1f}")
    for k in (2, 4, 8):
        medn = num(f"handoff.fair.k{k}.handoff_median_ms")
        emit(f"handoff.fair.k{k}.delay_median_idle_rtt", medn * 1000 / idle_us, "round-trips",
             "{:.1f}")
        emit(f"handoff.fair.k{k}.acquire_requests_per_acquisition",
             num(f"handoff.fair.k{k}.acquire_requests_per_acq"), "requests", "{:.2f}")
    release_us = num("idle_rtt.fair_release_median_us")
    emit("idle_rtt.fair_release", release_us, "us", "{:.1f}")
    emit("idle_rtt.fair_release_idle_rtt", release_us / idle_us, "round-trips", "{:.2f}")
    print(f"  the fair lock's release script, same idle server, nobody queued: {release_us:.1f} us"
          f" = {release_us / idle_us:.2f} idle round trips (a hand-off carries this script round"
          " trip; the target is <= 1.5)")
    script_us = [num(f"handoff.fair.k{k}.server_us_per_script") for k in (2, 4, 8)]
    for k, us in zip((2, 4, 8), script_us):
        emit(f"handoff.fair.k{k}.server_us_per_script", us, "us", "{:.1f}")
    print("  the server's own time per fair script call during those runs (INFO commandstats),"
          " K = 2 / 4 / 8: " + " / ".join(f"{us:.1f}" for us in script_us) + " us = "
          + " / ".join(f"{us / idle_us:.2f}" for us in script_us) + " idle round trips")
    print(f"  round trip of a client asleep 2 ms before each PING (as a woken waiter):"
          f" {idle_us:.1f} us; median hand-off in those (K = 2 / 4 / 8): "
          + ", ".join(s + " " + " / ".join(
              f"{num(f'handoff.{s}.k{k}.handoff_median_ms') * 1000 / idle_us:.1f}"
              for k in (2, 4, 8)) for s in ("backoff", "wake", "fair")))
    print("  acquisition requests (each acquisition's own, its release not counted), K = 2 / 4 /"
          " 8: " + ", ".join(s + " " + " / ".join(
              f"{num(f'handoff.{s}.k{k}.acquire_requests_per_acq'):.2f}" for k in (2, 4, 8))
              for s in STRATEGIES))
    print()
    print("   Spread: every process tries again at once after its release (no rejoin rule);"
          " acquisitions of one process")
    print(f"{'waiter':34} {'K':>2} {'acq/s':>7} {'fewest':>7} {'most':>7} {'spread':>7}"
          f" {'allowed':>8} {'median ms':>10}")
    for strategy, label in (("backoff", "resplock try_acquire backoff"),
                            ("wake", "resplock try_acquire + wake"),
                            ("fair", "resplock FairLock, hand-off")):
        for k in (2, 4, 8):
            p = f"spread.{strategy}.k{k}."
            lo, hi = int(num(p + "worker_acq_min")), int(num(p + "worker_acq_max"))
            allowed = 1 + 0.1 * lo
            print(f"{label:34} {k:2d} {num(p + 'acq_per_s'):7.1f} {lo:7d} {hi:7d} {hi - lo:7d}"
                  f" {allowed:8.1f} {num(p + 'handoff_median_ms'):10.2f}")
            emit(f"spread.{strategy}.k{k}.fewest", lo, "acquisitions")
            emit(f"spread.{strategy}.k{k}.most", hi, "acquisitions")
            emit(f"spread.{strategy}.k{k}.spread", hi - lo, "acquisitions")
    print()
    print("   Fair lock targets (reported, never checked: timings depend on the machine)")
    for k in (2, 4, 8):
        medn = num(f"handoff.fair.k{k}.handoff_median_ms") * 1000 / idle_us
        req = num(f"handoff.fair.k{k}.acquire_requests_per_acq")
        lo = int(num(f"spread.fair.k{k}.worker_acq_min"))
        hi = int(num(f"spread.fair.k{k}.worker_acq_max"))
        verdict = lambda ok: "met" if ok else "MISSED"
        print(f"  K = {k}: median hand-off {medn:.1f} idle round trips (target <= 1.5:"
              f" {verdict(medn <= 1.5)}), {req:.2f} requests per acquisition (target <= 2:"
              f" {verdict(req <= 2.0)}), spread {hi - lo} of {lo}..{hi} (target <= 1 + 10% of"
              f" the fewest = {1 + 0.1 * lo:.1f}: {verdict(hi - lo <= 1 + 0.1 * lo)})")
    print(f"  requests: SET + PTTL + EVALSHA/EVAL + BLPOP calls counted by the server (INFO"
          f" commandstats) / acquisitions (for wake, not the SET and PTTL its scripts call); a"
          f" round trip is half an uncontended cycle of part 1 ({rtt_us:.1f} us)")


    print()
    print("   Semaphore: N places, 2N processes, one key, hold 5 ms; the fair lock (2 processes) is"
          " the N = 1 baseline, run in the same loop")
    print("   hand-off: a process rejoins once another acquired after its release; spread: it tries"
          " again at once (most and fewest acquisitions of one process)")
    print(f"{'waiter':30} {'N':>2} {'procs':>5} {'acq/s':>7} {'/place':>7} {'median ms':>10}"
          f" {'p99 ms':>8} {'req/acq':>8} {'BLPOP/acq':>10} {'fewest':>7} {'most':>6}"
          f" {'spread: acq/s':>14} {'fewest':>7} {'most':>6}")
    sem_labels = {"fairlock": "resplock FairLock (baseline)", "plain": "resplock Semaphore, plain",
                  "fair": "resplock Semaphore, fair"}
    for kind, n in SEMAPHORE_CASES:
        p, g = f"semaphore.handoff.{kind}.n{n}.", f"semaphore.spread.{kind}.n{n}."
        acq, medn, p99 = num(p + "acq_per_s"), num(p + "handoff_median_ms"), num(
            p + "handoff_p99_ms")
        req, blpop = num(p + "requests_per_acq"), num(p + "blpop_per_acq")
        lo, hi = int(num(p + "worker_acq_min")), int(num(p + "worker_acq_max"))
        g_acq, g_lo, g_hi = num(g + "acq_per_s"), int(num(g + "worker_acq_min")), int(
            num(g + "worker_acq_max"))
        print(f"{sem_labels[kind]:30} {n:2d} {2 * n:5d} {acq:7.1f} {acq / n:7.1f} {medn:10.2f}"
              f" {p99:8.2f} {req:8.2f} {blpop:10.2f} {lo:7d} {hi:6d} {g_acq:14.1f} {g_lo:7d}"
              f" {g_hi:6d}")
        q = f"semaphore.{kind}.n{n}"
        emit(f"{q}.acquisitions_per_s", acq, "1/s", "{:.1f}")
        emit(f"{q}.acquisitions_per_s_per_place", acq / n, "1/s", "{:.1f}")
        emit(f"{q}.delay_median", medn, "ms", "{:.2f}")
        emit(f"{q}.delay_p99", p99, "ms", "{:.2f}")
        emit(f"{q}.requests_per_acquisition", req, "requests", "{:.2f}")
        emit(f"{q}.blpop_per_acquisition", blpop, "requests", "{:.2f}")
        emit(f"{q}.handoffs", int(num(p + "handoffs")), "count")
        emit(f"{q}.fewest", lo, "acquisitions")
        emit(f"{q}.most", hi, "acquisitions")
        emit(f"{q}.max_holders", int(num(p + "max_holders_recorded")), "holders")
        emit(f"{q}.spread.acquisitions_per_s", g_acq, "1/s", "{:.1f}")
        emit(f"{q}.spread.delay_median", num(g + "handoff_median_ms"), "ms", "{:.2f}")
        emit(f"{q}.spread.fewest", g_lo, "acquisitions")
        emit(f"{q}.spread.most", g_hi, "acquisitions")
    base = "semaphore.handoff.fairlock.n1."
    base_rate, base_med = num(base + "acq_per_s"), num(base + "handoff_median_ms")
    base_p99, base_req = num(base + "handoff_p99_ms"), num(base + "requests_per_acq")
    print("   next to the fair lock (its row above): the semaphore's figure / the fair lock's")
    print(f"{'waiter':30} {'N':>2} {'acq/s per place':>16} {'median':>8} {'p99':>8}"
          f" {'req/acq':>8}")
    for kind, n in SEMAPHORE_CASES[1:]:
        p = f"semaphore.handoff.{kind}.n{n}."
        ratios = (num(p + "acq_per_s") / n / base_rate, num(p + "handoff_median_ms") / base_med,
                  num(p + "handoff_p99_ms") / base_p99, num(p + "requests_per_acq") / base_req)
        print(f"{sem_labels[kind]:30} {n:2d} {ratios[0]:16.2f} {ratios[1]:8.2f} {ratios[2]:8.2f}"
              f" {ratios[3]:8.2f}")
        for name, ratio in zip(("per_place_rate", "delay_median", "delay_p99", "requests"),
                               ratios):
            emit(f"semaphore.{kind}.n{n}.vs_fairlock.{name}", ratio, "ratio", "{:.2f}")

    print()
    print("== 4. Footprint")
    if "cortex_m4.skipped" in v:
        print("Cortex-M4: skipped (arm-none-eabi-g++ not installed)")
        emit("footprint.cortex_m4", "skipped", "-")
    else:
        stacks = {k[len("cortex_m4.stack."):]: int(num(k)) for k in v
                  if k.startswith("cortex_m4.stack.")}
        worst = max(stacks, key=lambda k: stacks[k])
        flash, ram = int(num("cortex_m4.core_flash")), int(num("cortex_m4.core_ram"))
        core_stack = int(num("cortex_m4.core_stack_worst"))
        firmware = int(num("cortex_m4.firmware_c_api.flash"))
        print("Cortex-M4 (-Os, arm-none-eabi-g++):")
        print(f"  core flash {flash} B, linked by a minimal firmware of the plain lock"
              f" (the size check's budget: {target(flash, 4352, 'B')})")
        print(f"  core static RAM {ram} B ({target(ram, 0, 'B')})")
        print(f"  worst stack of a core or C API call {core_stack} B ({target(core_stack, 512, 'B')});"
              f" of any public call {stacks[worst]} B ({worst}, optional)")
        print(f"  firmware with the C API's try_acquire/extend/release, library + C run-time"
              f" {firmware} B ({target(firmware, 4096, 'B')})")
        core = [(k[len("cortex_m4.core_flash_by_source."):], int(num(k))) for k in v
                if k.startswith("cortex_m4.core_flash_by_source.")]
        if core:
            print("  core flash (what the plain lock's firmware links) by source: "
                  + ", ".join(f"{o} {b} B" for o, b in core))
        emit("footprint.cortex_m4.flash", flash, "bytes")
        emit("footprint.cortex_m4.ram", ram, "bytes")
        emit("footprint.cortex_m4.stack_worst", stacks[worst], "bytes")
        emit("footprint.cortex_m4.core_stack_worst", core_stack, "bytes")
        emit("footprint.cortex_m4.firmware_c_api", firmware, "bytes")
    print(f"{'x86-64 static library (-O2)':40} {'.a bytes':>9} {'text+data+bss':>14}")
    for lib, label in (("resplock", "libresplock.a (every object)"),
                       ("resplock_posix", "libresplock_posix.a (POSIX port)"),
                       ("hiredis", "libhiredis.a (Debian)")):
        f, c = int(num(f"x86_64.{lib}.file")), int(num(f"x86_64.{lib}.code"))
        print(f"{label:40} {f:9d} {c:14d}")
        emit(f"footprint.x86_64.{lib}.file", f, "bytes")
        emit(f"footprint.x86_64.{lib}.code", c, "bytes")

    print()
    print("== 5. Heap calls inside the measured loop (LD_PRELOAD counter)")
    n = int(num("heap.cycles"))
    for client in ("ours", "hiredis"):
        a, f = int(num(f"heap.{client}.allocs")), int(num(f"heap.{client}.frees"))
        print(f"{client:8} allocations {a / n:6.2f}/cycle   frees {f / n:6.2f}/cycle   ({n} cycles)")
        emit(f"heap.{client}.allocations", a / n, "per-cycle", "{:.2f}")
        emit(f"heap.{client}.frees", f / n, "per-cycle", "{:.2f}")

    print()
    print("== Invariants (checked in every run, --quick included)")
    checks = []
    checks.append((int(num("script.digest_match")) == 1,
                   "owner script: the server's SHA1 of the library's script text is the SHA1 the"
                   " library sends (and no EVALSHA of part 1 fell back to EVAL)"))
    runs = [("handoff", s) for s in STRATEGIES] + [("spread", s) for s in SPREAD_STRATEGIES]
    overlaps = {f"{r}.{s}.k{k}": int(num(f"{r}.{s}.k{k}.exclusion_overlaps"))
                for r, s in runs for k in PROCESSES}
    holders = {f"{r}.{s}.k{k}": int(num(f"{r}.{s}.k{k}.max_holders"))
               for r, s in runs for k in PROCESSES}
    acquisitions = sum(int(num(f"{r}.{s}.k{k}.acquisitions"))
                       for r, s in runs for k in PROCESSES)
    broken = [run for run in overlaps if overlaps[run] != 0 or holders[run] != 1]
    checks.append((not broken,
                   f"mutual exclusion: {acquisitions} acquisitions in {len(overlaps)} hand-off"
                   f" runs, {sum(overlaps.values())} returned before an earlier holder sent its"
                   f" release, at most {max(holders.values())} holder(s) at once"
                   + (f" (broken in {', '.join(broken)})" if broken else "")))
    sem_runs = [f"semaphore.{p}.{kind}.n{n}" for p in SEMAPHORE_PASSES
                for kind, n in SEMAPHORE_CASES]
    sem_broken, most_seen = [], {}
    for run in sem_runs:
        places = int(run.rsplit(".n", 1)[1])
        live, recorded = int(num(run + ".max_holders")), int(num(run + ".max_holders_recorded"))
        over, limit = int(num(run + ".exclusion_overlaps")), int(num(run + ".limit"))
        most_seen[places] = max(most_seen.get(places, 0), recorded, live)
        if limit != places or over != 0 or live > places or recorded > places:
            sem_broken.append(f"{run}: {recorded} holders at once in the recorded intervals,"
                              f" {live} counted live, {over} grants while {places} held"
                              + (f", limit {limit}" if limit != places else ""))
    sem_acquisitions = sum(int(num(run + ".acquisitions")) for run in sem_runs)
    sem_over = sum(int(num(run + ".exclusion_overlaps")) for run in sem_runs)
    limits = sorted(most_seen)
    checks.append((not sem_broken,
                   f"semaphore limit (at most N holders at once, from the recorded hold intervals"
                   f" and the live count): {sem_acquisitions} acquisitions in {len(sem_runs)} runs,"
                   f" {sem_over} returned while N earlier holders had not sent their release, most"
                   f" holders seen {' / '.join(str(most_seen[k]) for k in limits)} at N ="
                   f" {' / '.join(str(k) for k in limits)}"
                   + (f" (broken in {'; '.join(sem_broken)})" if sem_broken else "")))
    ours_a, ours_f = int(num("heap.ours.allocs")), int(num("heap.ours.frees"))
    checks.append((ours_a == 0 and ours_f == 0,
                   f"heap: resplock made {ours_a} allocations and {ours_f} frees in {n} measured"
                   " cycles"))
    checks.append((int(num("heap.hiredis.allocs")) > 0,
                   f"heap counter: it saw {int(num('heap.hiredis.allocs'))} allocations by hiredis"
                   " (none would mean it is not counting)"))
    checks.append((True, f"every part ran and gave its figures ({len(v)} raw figures)"))
    for ok, text in checks:
        print(f"  {'ok    ' if ok else 'FAILED'}  {text}")
        if not ok:
            failures.append(text)

    print()
    for name, value, unit in out:
        print(f"{name} {value} {unit}")
    for f in failures:
        print(f"INVARIANT FAILED: {f}", file=sys.stderr)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
