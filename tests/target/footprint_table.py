#!/usr/bin/env python3
"""The per-core footprint tables of docs/footprint.md, checked against `make size`'s figures.

Reads the `<core>.<figure> <value> <unit>` lines of a size report (`make size CORE=...`: the core
firmware's analysis from size_report.py, the C API firmware's from firmware_size.py) and renders
the core's table: flash per source of the core, the core's total flash and static RAM, the worst
stack of each budgeted public call, and what the minimal C API firmware pays (library, C run-time,
and each run-time member: memcpy, libgcc's division helpers ...). The table sits in the document
between `<!-- footprint-table: <core> -->` and `<!-- /footprint-table -->`.

Without --write: exits 1 when the document's table and the figures differ (naming each row that
differs, is missing or is extra); with --write: replaces the table with the figures.
  footprint_table.py --core cortex_m0plus --doc docs/footprint.md REPORT [--write]
Regenerate a table with `make footprint CORE=cortex-m0plus FOOTPRINT_WRITE=1`.
"""

import argparse
import re
import sys

END = "<!-- /footprint-table -->"


def figures(report, core):
    """{figure: value} from the report's lines for this core."""
    pattern = re.compile(r"^" + re.escape(core) + r"\.(\S+) (-?\d+) (\w+)$")
    out = {}
    for line in report.splitlines():
        m = pattern.match(line.strip())
        if m:
            out[m.group(1)] = int(m.group(2))
    return out


def rows(fig, core):
    """The table's rows, in order: (label, value)."""
    out = []
    for key in sorted(k for k in fig if k.startswith("core_flash_by_source.")):
        src = "src/" + key[len("core_flash_by_source."):].replace(".", "/") + ".cpp"
        out.append((f"core flash: {src}", fig[key]))
    for key, label in (("core_flash", "core flash: total"),
                       ("core_ram", "core static RAM (.data + .bss)"),
                       ("core_stack_worst", "core stack: worst public call")):
        if key not in fig:
            raise SystemExit(f"the report has no {core}.{key}: not a `make size` report")
        out.append((label, fig[key]))
    for key in sorted(k for k in fig if k.startswith("core_stack.")):
        out.append((f"stack: {key[len('core_stack.'):]}", fig[key]))
    for key, label in (("firmware_c_api.library_flash", "C API firmware: library flash"),
                       ("firmware_c_api.runtime_flash", "C API firmware: C run-time flash"),
                       ("firmware_c_api.flash", "C API firmware: total flash"),
                       ("firmware_c_api.ram", "C API firmware: static RAM")):
        if key not in fig:
            raise SystemExit(f"the report has no {core}.{key}: not a `make size` report")
        out.append((label, fig[key]))
    for key in sorted(k for k in fig if k.startswith("firmware_c_api.runtime.")):
        out.append((f"C API firmware run-time: {key[len('firmware_c_api.runtime.'):]}", fig[key]))
    return out


def render(table_rows, core):
    lines = [f"<!-- footprint-table: {core} -->",
             f"| {core} | bytes |", "|---|---|"]
    lines += [f"| {label} | {value} |" for label, value in table_rows]
    lines.append(END)
    return "\n".join(lines)


def find_block(doc, core):
    start = doc.find(f"<!-- footprint-table: {core} -->")
    if start < 0:
        return None
    end = doc.find(END, start)
    if end < 0:
        raise SystemExit(f"the table of {core} has no closing {END}")
    return start, end + len(END)


def parse_block(block):
    """(label, value) for each body row of the document's table."""
    out = []
    for line in block.splitlines():
        m = re.match(r"^\|\s*(.+?)\s*\|\s*(-?\d+)\s*\|\s*$", line)
        if m:
            out.append((m.group(1), int(m.group(2))))
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("report", help="the output of `make size` for the core")
    ap.add_argument("--core", required=True, help="figures' prefix: cortex_m0plus, cortex_m4 ...")
    ap.add_argument("--doc", required=True, help="docs/footprint.md")
    ap.add_argument("--write", action="store_true", help="rewrite the core's table")
    args = ap.parse_args()

    with open(args.report, encoding="utf-8") as f:
        measured = rows(figures(f.read(), args.core), args.core)
    with open(args.doc, encoding="utf-8") as f:
        doc = f.read()
    span = find_block(doc, args.core)
    table = render(measured, args.core)

    if args.write:
        if span is None:
            doc = doc.rstrip("\n") + "\n\n" + table + "\n"
        else:
            doc = doc[:span[0]] + table + doc[span[1]:]
        with open(args.doc, "w", encoding="utf-8") as f:
            f.write(doc)
        print(f"{args.doc}: table of {args.core} written ({len(measured)} rows)")
        return 0

    if span is None:
        print(f"FAIL: {args.doc} has no table of {args.core} (<!-- footprint-table: "
              f"{args.core} -->): write it with `make footprint CORE="
              f"{args.core.replace('_', '-')} FOOTPRINT_WRITE=1`")
        return 1
    documented = parse_block(doc[span[0]:span[1]])
    doc_map, got_map = dict(documented), dict(measured)
    problems = []
    for label, value in measured:
        if label not in doc_map:
            problems.append(f"{label}: measured {value}, not in the table")
        elif doc_map[label] != value:
            problems.append(f"{label}: the table says {doc_map[label]}, measured {value}")
    for label, value in documented:
        if label not in got_map:
            problems.append(f"{label}: the table says {value}, not measured")
    if len(documented) != len(doc_map):
        problems.append("a row appears twice in the table")
    if problems:
        for p in problems:
            print(f"FAIL: docs/footprint.md, {args.core}: {p}")
        print(f"(regenerate: make footprint CORE={args.core.replace('_', '-')} "
              f"FOOTPRINT_WRITE=1)")
        return 1
    print(f"ok: the table of {args.core} in {args.doc} matches the measured figures "
          f"({len(measured)} rows)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
