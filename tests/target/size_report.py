#!/usr/bin/env python3
"""Footprint of the resplock core on a Cortex-M4: the flash and RAM a minimal firmware that uses
the plain lock links from the library, symbol by symbol, and the worst-case stack depth of each
public function.

Inputs, built by `make size` (arm-none-eabi-g++ -Os -ffunction-sections -fdata-sections):
- --map: the GNU ld link map of tests/target/cortex-m4/firmware_core.cpp, a firmware that sets up
  a Connection over a port of its own and calls each public call of the plain Lock, linked with
  --gc-sections against the library archive. The core is what that link keeps from the archive,
  whatever folder of src/ the code is in: each kept input section is attributed to the library
  object it came from (the port, the C run-time, libstdc++ and the firmware's own code are not
  counted). flash = text + rodata + initial values of .data, RAM = .data + .bss. With
  -ffunction-sections each input section is one function or datum, named after its symbol.
- --build: the library's objects (src/**/*.o) with their .ci call-graph files
  (-fstack-usage -fcallgraph-info=su): every object's own size (what a firmware pays at most for
  it), and the stack analysis.

- Worst-case stack of a function = its own frame + the deepest chain of calls it makes to other
  functions of these objects, in whichever object they are. Calls through function pointers (the
  port's callbacks) and calls to the C run-time (memcpy, ...) are outside the library and are
  listed, not counted. Recursion or an unbounded (dynamic) frame is an error: the depth would have
  no bound. The stack budget covers the public calls the core firmware links and the C API of the
  plain lock (the functions include/resplock/c_api/lock.h declares).

With --check, exits 1 when the core is over budget or the analysis finds an error.
Prints tables for people, then `name value unit` lines for scripts.
"""

import argparse
import os
import re
import shutil
import struct
import subprocess
import sys

import linkmap

HERE = os.path.dirname(os.path.abspath(__file__))
C_API_HEADER = os.path.join(HERE, "..", "..", "include", "resplock", "c_api", "lock.h")

# What each object holds, by its path under src/: labels for the tables, nothing more. What counts
# towards the core is decided by the link, not by these names or folders.
ROLES = {
    "core/resp.cpp": "RESP codec",
    "core/connection.cpp": "connection",
    "core/lock.cpp": "lock",
    "core/validity.cpp": "validity",
    "core/token.cpp": "tokens",
    "core/script.cpp": "script requests",
    "core/retry.cpp": "wake-up block",
    "core/companion.cpp": "companion keys",
    "core/observer.cpp": "observer",
    "variants/reentrant_lock.cpp": "reentrant lock",
    "variants/quorum_lock.cpp": "quorum lock",
    "variants/renewer.cpp": "renewal driver",
    "variants/fair_lock.cpp": "fair lock",
    "variants/semaphore.cpp": "semaphore",
    "ha/sentinel.cpp": "Sentinel router",
    "ha/cluster.cpp": "Cluster router",
    "c_api/cluster_c.cpp": "C API: Cluster",
    "c_api/lock_c.cpp": "C API",
    "c_api/observer_c.cpp": "C API: observer",
    "c_api/options_c.cpp": "C API: options",
    "c_api/reentrant_c.cpp": "C API: reentrant",
    "c_api/quorum_c.cpp": "C API: quorum",
    "c_api/renewer_c.cpp": "C API: renewer",
    "c_api/fair_c.cpp": "C API: fair lock",
    "c_api/semaphore_c.cpp": "C API: semaphore",
    "c_api/sentinel_c.cpp": "C API: Sentinel",
    "c_api/status_c.cpp": "status texts",
}

# The plain lock's public calls: the core firmware must link at least one overload of each (it
# calls them), and the overloads it links are the C++ calls the stack budget covers.
CORE_PUBLIC = [
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
]
# Public C++ entry points reported (qualified names; every overload, wherever it is defined). The
# C API functions of the plain lock (include/resplock/c_api/lock.h) are added to them.
PUBLIC = CORE_PUBLIC + [
    # The optional lock kinds: reported with their depth, not budgeted (see budgeted()).
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
    "resplock::Semaphore::try_acquire",
    "resplock::Semaphore::release",
    "resplock::Semaphore::extend",
    "resplock::Semaphore::query",
    "resplock::Semaphore::holders",
]
INDIRECT = "__indirect_call"


def c_api_names(header):
    """The functions a C header declares (comments stripped)."""
    if not os.path.exists(header):
        return set()
    with open(header) as f:
        text = f.read()
    text = re.sub(r"/\*.*?\*/|//[^\n]*", "", text, flags=re.S)
    return set(re.findall(r"\b(resplock_[a-z0-9_]+)\s*\(", text))


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
        # Code local to a function, e.g. a lambda's body or its conversion to a function pointer
        # ("f(int)::<lambda(void*)>::_FUN(void*)"), is not that function nor an overload of it.
        if re.search(r"\)(?: const)?::", self.params):
            self.name += "::<local>"
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


SECTION_RE = re.compile(r"^\.(text|rodata|data\.rel\.ro(?:\.local)?|data|bss|init_array|fini_array)"
                        r"(?:\.(.*))?$")
STRING_VIEW = "std::basic_string_view<char, std::char_traits<char> >"


def demangler(names):
    """mangled -> demangled for the _Z names given, through c++filt (the cross one or the host's);
    each name unchanged when neither is installed."""
    names = sorted(n for n in set(names) if n.startswith("_Z"))
    out = {n: n for n in names}
    for tool in ("arm-none-eabi-c++filt", "c++filt"):
        if not names or shutil.which(tool) is None:
            continue
        res = subprocess.run([tool], input="\n".join(names) + "\n", capture_output=True, text=True)
        lines = res.stdout.split("\n")
        if res.returncode == 0 and len(lines) >= len(names):
            out.update(zip(names, lines))
            break
    return out


def section_symbol(name):
    """(kind, symbol, note) of an input section named by -ffunction-sections / -fdata-sections:
    .text.SYM is SYM's code, .rodata.SYM.str1.1 the string literals of SYM, .rodata.str1.1 an
    object's strings that belong to no one function, .rodata.CSWTCH.N a switch's lookup table."""
    m = SECTION_RE.match(name)
    if not m:
        return "other", None, name
    kind = {"text": "text", "bss": "bss"}.get(m.group(1), "data" if m.group(1) == "data" else
                                              "rodata")
    rest = m.group(2)
    if rest is None:
        return kind, None, f"(.{m.group(1)}, unnamed)"
    strings = re.match(r"^(.*?)\.?(str\d+\.\d+|cst\d+)$", rest)
    if strings:
        what = "strings" if strings.group(2).startswith("str") else "constants"
        if not strings.group(1):
            return kind, None, f"({what} of no one function)"
        return kind, strings.group(1), f"({what})"
    if rest.startswith("CSWTCH."):
        return kind, None, f"(switch table {rest})"
    return kind, rest, ""


def pretty(symbol):
    return re.sub(r"\bresplock::", "", symbol.replace(STRING_VIEW, "std::string_view"))


def object_sources(build):
    """{object file name: source path} of the objects under build/src, e.g. lock.o:
    src/core/lock.cpp (the archive keeps file names only)."""
    found = {}
    objdir = os.path.join(build, "src")
    for folder, _, files in os.walk(objdir):
        rel = os.path.relpath(folder, objdir)
        for f in files:
            if f.endswith(".o"):
                found.setdefault(f, []).append(os.path.normpath(os.path.join("src", rel, f[:-2] +
                                                                            ".cpp")))
    return found


class Core:
    """What the core firmware's link map shows kept from the library, per symbol."""

    def __init__(self, map_path, library, sources):
        self.rows = {}  # (symbol shown, kind, source) -> [flash, ram]
        self.flash = self.ram = 0
        self.kept = set()  # link names of the library's kept functions and data
        self.by_source = {}
        self.errors = []
        kept = [s for s in linkmap.parse(map_path) if linkmap.loaded(s)]
        names = {}
        for section in kept:
            _, symbol, _ = section_symbol(section.name)
            if symbol:
                names[section] = re.sub(r"\.(isra|constprop|part|cold)\.\d+.*$", "", symbol)
        readable = demangler(names.values())
        for section, size in linkmap.occupied(kept):
            if linkmap.origin(section.file, library) != "library":
                continue
            obj = linkmap.member(section.file)
            candidates = sources.get(obj, [])
            if len(candidates) > 1:
                self.errors.append(f"{obj}: several objects of that name ({', '.join(candidates)}); "
                                   f"the archive cannot tell them apart")
            source = candidates[0] if len(candidates) == 1 else obj
            kind, symbol, note = section_symbol(section.name)
            if symbol:
                self.kept.add(symbol)
                clone = symbol[len(names[section]):]
                shown = pretty(readable.get(names[section], names[section])) + (
                    f" [{clone.lstrip('.')}]" if clone else "")
                shown = f"{shown} {note}".rstrip()
            else:
                shown = f"{note} {obj}"
            flash = size if linkmap.in_flash(section) else 0
            ram = size if linkmap.in_ram(section) else 0
            row = self.rows.setdefault((shown, kind, source), [0, 0])
            row[0] += flash
            row[1] += ram
            self.flash += flash
            self.ram += ram
            self.by_source[source] = self.by_source.get(source, 0) + flash
        if not self.rows:
            raise SystemExit(f"{map_path}: nothing from {library} was linked")


def object_table(build):
    """(source, flash, RAM) of every library object, whole."""
    sources = object_sources(build)
    rows = []
    for paths in sources.values():
        for src in paths:
            obj = os.path.join(build, src[:-4] + ".o")
            flash, ram = footprint(dedupe(sections(obj)))
            rows.append((src, flash, ram))
    return sorted(rows)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--map", required=True, help="link map of the core firmware (firmware_core)")
    ap.add_argument("--library", default="libresplock.a", help="file name of the library archive")
    ap.add_argument("--build", help="folder holding src/**/*.o and their .ci (the object table "
                    "and the stack analysis; without it, only the core's flash and RAM)")
    ap.add_argument("--c-api-header", default=C_API_HEADER,
                    help="header of the plain lock's C API, whose calls the stack budget covers")
    ap.add_argument("--compiler", default="arm-none-eabi-g++", help="named in the report")
    ap.add_argument("--flags", default="", help="compiler flags, named in the report")
    ap.add_argument("--check", action="store_true", help="exit 1 when over budget")
    ap.add_argument("--core", default="cortex_m4",
                    help="the core the figures are for: their prefix (cortex_m0plus, ...)")
    ap.add_argument("--max-core-flash", type=int, default=4352)
    ap.add_argument("--max-core-ram", type=int, default=0)
    ap.add_argument("--max-stack", type=int, default=512)
    args = ap.parse_args()

    sources = object_sources(args.build) if args.build else {}
    core = Core(args.map, args.library, sources)
    errors = list(core.errors)

    print(f"resplock on {args.core}: {args.compiler} {args.flags}".rstrip())
    print()
    print(f"core: what the minimal firmware of the plain lock links from {args.library}, by symbol, "
          f"largest first")
    print(f"(link map {args.map})")
    rows = sorted(((k, v) for k, v in core.rows.items() if v[0] or v[1]),
                  key=lambda kv: (-kv[1][0] - kv[1][1], kv[0]))
    width = max(len(src) for (_, _, src) in core.rows)
    print(f"  {'flash':>5} {'RAM':>4}  {'kind':<6} {'source':<{width}}  symbol")
    for (shown, kind, src), (flash, ram) in rows:
        print(f"  {flash:>5} {ram:>4}  {kind:<6} {src:<{width}}  {shown}")
    print("  by source: " + ", ".join(f"{src} {b} B" for src, b in
                                      sorted(core.by_source.items(), key=lambda kv: -kv[1])))
    print(f"  core total: {core.flash} B flash, {core.ram} B RAM in {len(rows)} symbols   (budget: "
          f"flash <= {args.max_core_flash} B, RAM <= {args.max_core_ram} B)")
    print("  flash = text + rodata + .data initial values; RAM = .data + .bss; alignment padding")
    print("  is not counted. Not counted either: the firmware's own code and port, the C run-time")
    print("  (memcpy, ...), and the caller's objects (Connection, Lock, buffer).")
    print()

    results = []
    if args.build:
        print(f"every object of the library, whole (what a firmware pays at most for it; not "
              f"budgeted)")
        print(f"  {'object':<32} {'contents':<17} {'flash (B)':>9} {'RAM (B)':>8}")
        objects = object_table(args.build)
        if not objects:
            raise SystemExit(f"no objects under {args.build}/src: run `make size` first")
        for src, flash, ram in objects:
            print(f"  {src:<32} {ROLES.get(src[len('src/'):], ''):<17} {flash:>9} {ram:>8}")
        print()

        graphs = {}
        for paths in sources.values():
            for src in paths:
                ci = os.path.join(args.build, src[:-4] + ".ci")
                if not os.path.exists(ci):
                    raise SystemExit(f"{ci} missing: build with -fcallgraph-info=su")
                graphs[src] = read_callgraph(ci, src)
        analysis = StackAnalysis(graphs)
        c_api = c_api_names(args.c_api_header)

        def budgeted(fn):
            return link_name(fn.title) in core.kept or fn.name in c_api

        public = []
        for name in PUBLIC:
            found = sorted((fn for fn in analysis.defined.values() if fn.name == name),
                           key=lambda fn: fn.signature)
            if not found:
                errors.append(f"public function {name} not found in the objects")
            elif name in CORE_PUBLIC and not any(budgeted(fn) for fn in found):
                errors.append(f"the core firmware links no {short(name)}: the core budgets would "
                              f"not cover it (tests/target/cortex-m4/firmware_core.cpp)")
            public += found
        public += sorted((fn for fn in analysis.defined.values() if fn.name in c_api),
                         key=lambda fn: fn.name)

        names = [fn.name for fn in public]
        for fn in public:
            depth, chain, externals, port = analysis.worst(fn)
            key = short(fn.name)
            if names.count(fn.name) > 1:
                key += f"/{fn.params.count(',') + 1 if fn.params.strip('()') else 0}"
            results.append((fn, key, depth, chain, externals, port, budgeted(fn)))
        errors += analysis.errors

        print(f"worst-case stack, own frame + deepest call chain inside the library (budget <= "
              f"{args.max_stack} B)")
        width = max((len(key) for _, key, *_ in results), default=20)
        for fn, key, depth, chain, externals, port, inside in results:
            notes = []
            if port:
                notes.append("+port")
            if externals:
                notes.append("+" + ",".join(sorted(externals)))
            if not inside:
                notes.insert(0, f"(optional: {fn.obj}, not budgeted)")
            print(f"  {key:<{width}} {depth:>5} B  {' '.join(notes)}")
            route = " > ".join(f"{short(c.name)} {c.frame}" for c in chain)
            print(f"  {'':<{width}}          {route}")
        print("  Budgeted: the calls the core firmware links and the C API of the plain lock. Each")
        print("  chain: function and own frame in bytes, outermost first. +port: also calls the")
        print("  port through resplock_port_t's function pointers; the port's own stack is the")
        print("  port's business and comes on top. +name: calls that C run-time function (memcpy,")
        print("  ...), not counted either.")
        print()

    failures = []
    if core.flash > args.max_core_flash:
        failures.append(f"core flash {core.flash} B > {args.max_core_flash} B")
    if core.ram > args.max_core_ram:
        failures.append(f"core .data + .bss {core.ram} B > {args.max_core_ram} B")
    for fn, key, depth, *_, inside in results:
        if depth > args.max_stack and inside:
            failures.append(f"stack of {key} {depth} B > {args.max_stack} B")

    print(f"{args.core}.core_flash {core.flash} bytes")
    print(f"{args.core}.core_ram {core.ram} bytes")
    print(f"{args.core}.core_symbols {len(rows)} count")
    for src, b in sorted(core.by_source.items()):
        base = src[len("src/"):-len(".cpp")] if src.startswith("src/") else src
        print(f"{args.core}.core_flash_by_source.{base.replace('/', '.')} {b} bytes")
    core_stacks = [(depth, key) for fn, key, depth, *_, inside in results if inside]
    if core_stacks:
        print(f"{args.core}.core_stack_worst {max(core_stacks)[0]} bytes")
    if args.build:
        for src, flash, ram in objects:
            base = src[len("src/"):-len(".cpp")].replace("/", ".")
            print(f"{args.core}.flash.{base} {flash} bytes")
            print(f"{args.core}.ram.{base} {ram} bytes")
    for fn, key, depth, *_ in results:
        print(f"{args.core}.stack.{key} {depth} bytes")
    # The budgeted ones again (the core's public calls and the C API), for the footprint tables.
    for fn, key, depth, *_, inside in results:
        if inside:
            print(f"{args.core}.core_stack.{key} {depth} bytes")
    print()

    for e in errors:
        print(f"ERROR: {e}")
    for f in failures:
        print(f"OVER BUDGET: {f}")
    if not errors and not failures:
        print("within budget: core flash, core RAM" +
              (" and every budgeted public stack depth" if results else ""))
    if errors or (args.check and failures):
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
