"""Reads a GNU ld link map (-Wl,-Map) of a firmware linked with --gc-sections: the input sections
the linker kept, each with its output section, address, size and the file it came from, and the
bytes each one really occupies. Shared by size_report.py (the core budget) and firmware_size.py
(the C API firmware)."""

import os
import re
from collections import namedtuple

# An input section: " .text.name  0xADDR  0xSIZE  file", its name alone on the line before when
# long. *fill* lines are alignment padding, attributed to no one. The sections listed under
# "Discarded input sections" come before "Linker script and memory map" and are never read.
LINE = re.compile(r"^ (\S+)?\s+0x([0-9a-f]+)\s+0x([0-9a-f]+)\s+(\S.*)$")
OUTPUT = re.compile(r"^(\.\S+)")
RAM_SECTIONS = (".bss", ".noinit")
NOT_LOADED = (".comment", ".ARM.attributes", ".debug", ".stab")

Section = namedtuple("Section", "output name address size file")


def parse(path):
    """Yields a Section for each kept input section of non-zero size, in map order."""
    with open(path) as f:
        lines = f.read().split("\n")
    try:
        start = lines.index("Linker script and memory map")
    except ValueError:
        raise SystemExit(f"{path}: not a GNU ld map (no 'Linker script and memory map')")
    output = None
    pending = None  # a long input section name whose address is on the next line
    for line in lines[start + 1:]:
        m = OUTPUT.match(line)
        if m:
            output = m.group(1)
            pending = None
            continue
        if output is None:
            continue
        stripped = line.strip()
        if line.startswith(" ") and stripped and " " not in stripped and stripped.startswith("."):
            pending = stripped
            continue
        m = LINE.match(line)
        if not m:
            pending = None
            continue
        name = m.group(1) or pending
        pending = None
        if name is None or name == "*fill*":
            continue
        size = int(m.group(3), 16)
        if size:
            yield Section(output, name, int(m.group(2), 16), size, m.group(4).strip())


def occupied(sections):
    """(section, bytes) for each section: the bytes of its address range that no section before it
    (by address, the larger first at one address) already covers. ld lays merged strings
    (.rodata.*.str1.1) of several inputs out as one block and may print overlapping ranges for
    them; each byte of the output is counted once, for the first section that covers it."""
    out = []
    by_output = {}
    for s in sections:
        by_output.setdefault(s.output, []).append(s)
    for group in by_output.values():
        covered = None
        for s in sorted(group, key=lambda s: (s.address, -s.size)):
            start = s.address if covered is None else max(s.address, covered)
            end = s.address + s.size
            out.append((s, max(0, end - start)))
            covered = end if covered is None else max(covered, end)
    return out


def loaded(section):
    return not section.output.startswith(NOT_LOADED)


def in_flash(section):
    """Flash holds every loaded section but .bss/.noinit: .data's initial values are in flash."""
    return loaded(section) and not section.output.startswith(RAM_SECTIONS)


def in_ram(section):
    return loaded(section) and section.output.startswith(RAM_SECTIONS + (".data",))


def origin(path, library):
    """library, runtime, or own, from an input file as the map names it: archive(member) or
    object."""
    archive = path.split("(")[0]
    if os.path.basename(archive) == library:
        return "library"
    if "(" in path:
        return "runtime"
    return "own"


def member(path):
    """The object's file name: lock.o for .../libresplock.a(lock.o) or .../lock.o."""
    m = re.search(r"\(([^()]*)\)$", path)
    return m.group(1) if m else os.path.basename(path)
