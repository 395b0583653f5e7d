#!/usr/bin/env python3
"""Footprint of the resplock core on a Cortex-M4: flash and RAM per object file, and the worst-case
stack depth of each public function.

Input: the objects built by `make size` (arm-none-eabi-g++ -Os -ffunction-sections -fdata-sections
-fstack-usage -fcallgraph-info=su) under src/core, src/variants and src/c_api of the build folder,
each with its .ci call-graph file next to it. The core is exactly src/core.

- flash = text + rodata (+ initial values of data), RAM = data + bss, read from the ELF section
  headers. A section of a COMDAT group (an inline function emitted by several objects) is counted
  once in a total, as the linker keeps one copy.
- Worst-case stack of a function = its own frame + the deepest chain of calls it makes to other
  functions of these objects. Calls through function pointers (the port's callbacks) and calls to
  the C run-time (memcpy, ...) are outside the library and are listed, not counted. Recursion or an
  unbounded (dynamic) frame is an error: the depth would have no bound.

With --check, exits 1 when the core is over budget or the analysis finds an error.
Prints a table for people, then `name value unit` lines for scripts.
"""

import argparse
import os
import re
import struct
import sys

# What each object holds, by its path under src/. Everything outside src/core is optional: a
# firmware that does not call it does not link it.
ROLES = {
    "core/resp.cpp": "RESP codec",
    "core/connection.cpp": "connection",
    "core/lock.cpp": "lock",
    "core/lock_rules.cpp": "lock rules",
    "variants/lock_options.cpp": "fence/once/wake",
    "variants/reentrant_lock.cpp": "reentrant lock",
    "variants/quorum_lock.cpp": "quorum lock",
    "variants/renewer.cpp": "renewal driver",
    "variants/fair_lock.cpp": "fair lock",
    "variants/replicas.cpp": "replica WAIT",
    "ha/sentinel.cpp": "Sentinel router",
    "ha/cluster.cpp": "Cluster router",
    "variants/companion.cpp": "companion keys",
    "c_api/cluster_c.cpp": "C API: Cluster",
    "c_api/lock_c.cpp": "C API",
    "c_api/options_c.cpp": "C API: options",
    "c_api/reentrant_c.cpp": "C API: reentrant",
    "c_api/quorum_c.cpp": "C API: quorum",
    "c_api/renewer_c.cpp": "C API: renewer",
    "c_api/fair_c.cpp": "C API: fair lock",
    "c_api/sentinel_c.cpp": "C API: Sentinel",
    "c_api/status_c.cpp": "status texts",
}
# Core objects first, in this order; then anything else in src/core; then the optional ones.
ORDER = ["core/resp.cpp", "core/connection.cpp", "core/lock.cpp", "core/lock_rules.cpp"]
C_API = "c_api/lock_c.cpp"


def optional(src):
    return not src.startswith("core/")


# Public C++ entry points (qualified names; every overload is reported). The C API functions
# (resplock_*) of c_api/lock_c.cpp are added when that object exists.
PUBLIC = [
    "resplock::Connection::command",
    "resplock::Connection::connect",
    "resplock::Connection::close",
    "resplock::Lock::acquire",
    "resplock::Lock::try_acquire",
    "resplock::Lock::release",
    "resplock::Lock::extend",
    "resplock::Lock::query",
    "resplock::Lock::adopt",
    "resplock::resp::Parser::parse",
    "resplock::resp::encode_command",
    # The optional lock kinds: reported, not budgeted (see budgeted()).
    "resplock::ReentrantLock::try_acquire",
    "resplock::ReentrantLock::release",
    "resplock::ReentrantLock::extend",
    "resplock::QuorumLock::try_acquire",
    "resplock::QuorumLock::release",
    "resplock::QuorumLock::extend",
    "resplock::QuorumLock::query",
    "resplock::Renewer::tick",
    "resplock::FairLock::try_acquire",
    "resplock::FairLock::release",
]
INDIRECT = "__indirect_call"


def budgeted(fn):
    """The stack budget covers the core and its C API; the optional objects' calls (reentrant,
    quorum, options, renewer) are reported with their depth so a firmware can size its stacks."""
    return not optional(fn.obj) or fn.obj == C_API

SHF_WRITE, SHF_ALLOC, SHF_EXECINSTR = 0x1, 0x2, 0x4
SHT_SYMTAB, SHT_NOBITS, SHT_GROUP = 2, 8, 17
SHT_INIT_ARRAY, SHT_FINI_ARRAY, SHT_PREINIT_ARRAY = 14, 15, 16


def cstr(blob, offset):
    end = blob.index(b"\0", offset)
    return blob[offset:end].decode()


def sections(path):
    """Yields (name, kind, size, group) for each allocated section of a 32-bit little-endian ELF
    object; kind is text, rodata, data or bss; group is the COMDAT signature or None."""
    with open(path, "rb") as f:
        blob = f.read()
    if blob[:4] != b"\x7fELF" or blob[4] != 1 or blob[5] != 1:
        raise SystemExit(f"{path}: not a 32-bit little-endian ELF object")
    shoff = struct.unpack_from("<I", blob, 0x20)[0]
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", blob, 0x2E)
    headers = [struct.unpack_from("<10I", blob, shoff + i * shentsize) for i in range(shnum)]
    names_off = headers[shstrndx][4]

    def name(h):
        return cstr(blob, names_off + h[0])

    group_of = {}
    for h in headers:
        if h[1] != SHT_GROUP:
            continue
        symtab = headers[h[6]]
        strtab = headers[symtab[6]]
        sym_name = struct.unpack_from("<I", blob, symtab[4] + h[7] * 16)[0]
        signature = cstr(blob, strtab[4] + sym_name)
        words = struct.unpack_from(f"<{h[5] // 4}I", blob, h[4])
        for index in words[1:]:
            group_of[index] = signature

    for index, h in enumerate(headers):
        sh_type, flags, size = h[1], h[2], h[5]
        if not flags & SHF_ALLOC or size == 0:
            continue
        if flags & SHF_EXECINSTR:
            kind = "text"
        elif sh_type in (SHT_INIT_ARRAY, SHT_FINI_ARRAY, SHT_PREINIT_ARRAY):
            kind = "rodata"  # pointer tables that stay in flash
        elif not flags & SHF_WRITE:
            kind = "rodata"
        elif sh_type == SHT_NOBITS:
            kind = "bss"
        else:
            kind = "data"
        yield name(h), kind, size, group_of.get(index)


def footprint(secs):
    sums = {"text": 0, "rodata": 0, "data": 0, "bss": 0}
    for _, kind, size, _ in secs:
        sums[kind] += size
    # .data's initial values are stored in flash as well.
    return sums["text"] + sums["rodata"] + sums["data"], sums["data"] + sums["bss"]


def dedupe(secs):
    seen = set()
    out = []
    for s in secs:
        key = (s[3], s[0]) if s[3] else None
        if key and key in seen:
            continue
        if key:
            seen.add(key)
        out.append(s)
    return out


NODE_RE = re.compile(r'^node: \{ title: "([^"]*)" label: "((?:[^"\\]|\\.)*)"( shape : ellipse)?')
EDGE_RE = re.compile(r'^edge: \{ sourcename: "([^"]*)" targetname: "([^"]*)"')
STACK_RE = re.compile(r"(\d+) bytes \(([a-z,]+)\)")


class Function:
    def __init__(self, obj, title, label):
        lines = label.split("\\n")
        self.obj = obj
        self.title = title
        self.signature = lines[0]
        self.frame = None
        self.qualifier = None
        for line in lines[1:]:
            m = STACK_RE.search(line)
            if m:
                self.frame, self.qualifier = int(m.group(1)), m.group(2)
        head = self.signature.split("(", 1)[0]
        self.name = head.split(" ")[-1]
        self.params = self.signature[len(head):]
        self.calls = []  # titles, as written in this object's graph


def link_name(title):
    # GCC writes "file:symbol" for functions local to one object (COMDAT copies, statics).
    return title.rsplit(":", 1)[-1]


def read_callgraph(ci_path, obj):
    funcs = {}
    with open(ci_path) as f:
        for line in f:
            m = NODE_RE.match(line)
            if m:
                fn = Function(obj, m.group(1), m.group(2))
                if fn.frame is not None or m.group(1) not in funcs:
                    funcs[m.group(1)] = fn
                continue
            m = EDGE_RE.match(line)
            if m and m.group(1) in funcs:
                funcs[m.group(1)].calls.append(m.group(2))
    return funcs


class StackAnalysis:
    def __init__(self, graphs):
        self.graphs = graphs  # obj -> {title: Function}
        self.defined = {}  # link name -> Function (one copy of each)
        for funcs in graphs.values():
            for fn in funcs.values():
                if fn.frame is not None:
                    self.defined.setdefault(link_name(fn.title), fn)
        self.memo = {}
        self.errors = []

    def resolve(self, fn, target):
        """The library function a call goes to, or None when it leaves the library."""
        local = self.graphs[fn.obj].get(target)
        if local is not None and local.frame is not None:
            return local
        name = link_name(target)
        if name in self.defined:
            return self.defined[name]
        # GCC emits a complete-object constructor/destructor (C1/D1) as an alias of the base-object
        # one (C2/D2), which is the one the call graph describes.
        alias = re.sub(r"(C|D)1E", r"\g<1>2E", name, count=1)
        return self.defined.get(alias)

    def worst(self, fn, path=()):
        """(bytes, chain of functions, external callees, calls the port) for fn."""
        key = (fn.obj, fn.title)
        if key in self.memo:
            return self.memo[key]
        if key in path:
            cycle = " -> ".join(f.name for f in [*(self.find(k) for k in path), fn])
            self.errors.append(f"recursion: {cycle}")
            return 0, [fn], set(), False
        if "dynamic" in fn.qualifier and "bounded" not in fn.qualifier:
            self.errors.append(f"unbounded (dynamic) stack frame: {fn.signature}")
        best, best_chain = 0, []
        externals, port = set(), False
        for target in fn.calls:
            if target == INDIRECT:
                port = True
                continue
            callee = self.resolve(fn, target)
            if callee is None:
                externals.add(link_name(target))
                continue
            depth, chain, ext, callee_port = self.worst(callee, path + (key,))
            externals |= ext
            port = port or callee_port
            if depth > best:
                best, best_chain = depth, chain
        result = (fn.frame + best, [fn] + best_chain, externals, port)
        self.memo[key] = result
        return result

    def find(self, key):
        return self.graphs[key[0]][key[1]]


def short(name):
    return name[len("resplock::"):] if name.startswith("resplock::") else name


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--build", required=True, help="folder holding src/**/*.o and their .ci")
    ap.add_argument("--compiler", default="arm-none-eabi-g++", help="named in the report")
    ap.add_argument("--flags", default="", help="compiler flags, named in the report")
    ap.add_argument("--check", action="store_true", help="exit 1 when over budget")
    ap.add_argument("--max-core-flash", type=int, default=4480)
    ap.add_argument("--max-core-ram", type=int, default=0)
    ap.add_argument("--max-stack", type=int, default=512)
    args = ap.parse_args()

    objdir = os.path.join(args.build, "src")
    srcs = []
    for folder, _, files in os.walk(objdir):
        rel = os.path.relpath(folder, objdir)
        srcs += [os.path.join(rel, f[:-2] + ".cpp") for f in files if f.endswith(".o")]
    if not srcs:
        raise SystemExit(f"no objects under {objdir}: run `make size` first")
    srcs.sort(key=lambda s: (optional(s), ORDER.index(s) if s in ORDER else len(ORDER), s))

    errors = []
    rows = []
    core_secs = []
    graphs = {}
    for src in srcs:
        obj = os.path.join(objdir, src[:-4] + ".o")
        secs = list(sections(obj))
        flash, ram = footprint(secs)
        rows.append((f"src/{src}", ROLES.get(src, "core" if not optional(src) else "optional"),
                     flash, ram, optional(src)))
        if not optional(src):
            core_secs += secs
        ci = obj[:-2] + ".ci"
        if not os.path.exists(ci):
            raise SystemExit(f"{ci} missing: build with -fcallgraph-info=su")
        graphs[src] = read_callgraph(ci, src)
    core_flash, core_ram = footprint(dedupe(core_secs))

    analysis = StackAnalysis(graphs)
    public = []
    for name in PUBLIC:
        found = [fn for fn in analysis.defined.values() if fn.name == name]
        if not found:
            errors.append(f"public function {name} not found in the objects")
        public += sorted(found, key=lambda fn: fn.signature)
    if C_API in graphs:
        public += sorted(
            (fn for fn in graphs[C_API].values()
             if fn.frame is not None and fn.name.startswith("resplock_") and ":" not in fn.title),
            key=lambda fn: fn.name)

    print(f"resplock on Cortex-M4: {args.compiler} {args.flags}".rstrip())
    print()
    print(f"{'object':<30} {'contents':<17} {'flash (B)':>9} {'RAM (B)':>8}")
    for path, role, flash, ram, opt in rows:
        if opt:
            continue
        print(f"{path:<30} {role:<17} {flash:>9} {ram:>8}")
    print(f"{'core total (src/core)':<48} {core_flash:>9} {core_ram:>8}   "
          f"(budget: flash <= {args.max_core_flash} B, RAM <= {args.max_core_ram} B)")
    for path, role, flash, ram, opt in rows:
        if opt:
            print(f"{path:<30} {role:<17} {flash:>9} {ram:>8}   (outside the core: linked only if used)")
    print("flash = text + rodata (+ .data initial values); RAM = .data + .bss of the object itself.")
    print("The caller's objects (Connection, Lock, buffer) are not counted: they live where the")
    print("caller puts them.")
    print()

    results = []
    names = [fn.name for fn in public]
    for fn in public:
        depth, chain, externals, port = analysis.worst(fn)
        key = short(fn.name)
        if names.count(fn.name) > 1:
            key += f"/{fn.params.count(',') + 1 if fn.params.strip('()') else 0}"
        results.append((fn, key, depth, chain, externals, port))
    errors += analysis.errors

    print(f"worst-case stack, own frame + deepest call chain inside the library (budget <= "
          f"{args.max_stack} B)")
    width = max((len(key) for _, key, *_ in results), default=20)
    for fn, key, depth, chain, externals, port in results:
        notes = []
        if port:
            notes.append("+port")
        if externals:
            notes.append("+" + ",".join(sorted(externals)))
        if not budgeted(fn):
            notes.insert(0, f"(optional: {ROLES.get(fn.obj, fn.obj)}, not budgeted)")
        print(f"  {key:<{width}} {depth:>5} B  {' '.join(notes)}")
        route = " > ".join(f"{short(c.name)} {c.frame}" for c in chain)
        print(f"  {'':<{width}}          {route}")
    print("  Each chain: function and own frame in bytes, outermost first. +port: also calls the port")
    print("  through resplock_port_t's function pointers; the port's own stack is the port's business")
    print("  and comes on top. +name: calls that C run-time function (memcpy, ...), not counted either.")
    print()

    failures = []
    if core_flash > args.max_core_flash:
        failures.append(f"core flash {core_flash} B > {args.max_core_flash} B")
    if core_ram > args.max_core_ram:
        failures.append(f"core .data + .bss {core_ram} B > {args.max_core_ram} B")
    for fn, key, depth, *_ in results:
        if depth > args.max_stack and budgeted(fn):
            failures.append(f"stack of {key} {depth} B > {args.max_stack} B")

    print(f"cortex_m4.core_flash {core_flash} bytes")
    print(f"cortex_m4.core_ram {core_ram} bytes")
    # The deepest budgeted call (the core's and its C API's), the one the stack budget bounds.
    core_stacks = [(depth, key) for fn, key, depth, *_ in results if budgeted(fn)]
    if core_stacks:
        print(f"cortex_m4.core_stack_worst {max(core_stacks)[0]} bytes")
    for path, role, flash, ram, opt in rows:
        base = path[len("src/"):-len(".cpp")].replace("/", ".")
        print(f"cortex_m4.flash.{base} {flash} bytes")
        print(f"cortex_m4.ram.{base} {ram} bytes")
    for fn, key, depth, *_ in results:
        print(f"cortex_m4.stack.{key} {depth} bytes")
    print()

    for e in errors:
        print(f"ERROR: {e}")
    for f in failures:
        print(f"OVER BUDGET: {f}")
    if not errors and not failures:
        print("within budget: core flash, core RAM and every core public stack depth")
    if errors or (args.check and failures):
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
