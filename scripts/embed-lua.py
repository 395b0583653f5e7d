#!/usr/bin/env python3
"""Turns the library's Lua scripts into the C++ text it sends to the server.

Each script is a commented .lua file; the library sends a compact form of it, embedded in a
generated header that is committed, so that a build needs neither Python nor this script:

    src/core/lua/*.lua      ->  src/core/lua_scripts.hpp      (the core's: only src/core includes)
    src/variants/lua/*.lua  ->  src/variants/lua_scripts.hpp  (the variants')

The file NAME.lua becomes `inline constexpr Script NAME_script` in namespace resplock::detail
(Script: src/core/script.hpp), whose SHA1 and text are arrays of their own (NAME_sha1, NAME_text):
with -fdata-sections each is a section of its own, so a firmware links only the scripts its calls
send (string literals would share one section per object, kept whole). The text is the file with its comments
removed and every run of whitespace (newlines included) collapsed to one space, none at either
end; strings are copied as written. Nothing else is rewritten: the text keeps every token and
every separator the file has, so write the code as compactly as it should be sent, and spread it
over lines and comments for the reader. The SHA1 is the text's own, the name EVALSHA sends.

Usage:
    python3 scripts/embed-lua.py           rewrite the generated headers from the .lua files
    python3 scripts/embed-lua.py --check   generate into a temporary folder and compare with the
                                           committed headers; exit 1 if any differs
    python3 scripts/embed-lua.py --out DIR write the headers under DIR (same relative paths)
    python3 scripts/embed-lua.py --print   print each script's name, SHA1, length and text

Python 3 only, no other packages.
"""

import argparse
import difflib
import hashlib
import os
import re
import sys
import tempfile

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

# (folder of .lua files, generated header, include guard), paths relative to ROOT.
GROUPS = [
    ("src/core/lua", "src/core/lua_scripts.hpp", "RESPLOCK_CORE_LUA_SCRIPTS_HPP"),
    ("src/variants/lua", "src/variants/lua_scripts.hpp", "RESPLOCK_VARIANTS_LUA_SCRIPTS_HPP"),
]

WHITESPACE = " \t\r\n\f\v"
# How a character of the text is written in a C++ string literal, when not as itself (newlines
# and tabs can only come from a long string).
ESCAPES = {"\\": "\\\\", '"': '\\"', "\n": "\\n", "\t": "\\t"}
WIDTH = 90  # characters of text per C++ line: 4 of indent + 2 quotes + 90 + "};" <= 100


class LuaError(Exception):
    pass


def long_bracket(src, i):
    """The level of a long bracket opening at src[i] ([[ is 0, [=[ is 1, ...), or None."""
    if i >= len(src) or src[i] != "[":
        return None
    j = i + 1
    while j < len(src) and src[j] == "=":
        j += 1
    return j - i - 1 if j < len(src) and src[j] == "[" else None


def line_of(src, i):
    return src.count("\n", 0, i) + 1


def minify(src, where):
    """The text sent for the Lua source `src`: comments removed, whitespace collapsed."""
    out = []
    space = False  # whitespace or a comment since the last token: one space before the next
    i, n = 0, len(src)

    def emit(piece):
        nonlocal space
        if space and out:
            out.append(" ")
        space = False
        out.append(piece)

    while i < n:
        c = src[i]
        if c in WHITESPACE:
            space = True
            i += 1
        elif src.startswith("--", i):
            level = long_bracket(src, i + 2)
            if level is None:  # to the end of the line (the newline itself is whitespace)
                end = src.find("\n", i)
                i = n if end < 0 else end
            else:
                close = "]" + "=" * level + "]"
                end = src.find(close, i + 2 + level + 2)
                if end < 0:
                    raise LuaError("%s:%d: unfinished long comment" % (where, line_of(src, i)))
                i = end + len(close)
            space = True  # a comment separates tokens, as whitespace does
        elif c in "'\"":
            j = i + 1
            while j < n and src[j] != c:
                if src[j] == "\n":
                    break
                j += 2 if src[j] == "\\" else 1
            if j >= n or src[j] != c:
                raise LuaError("%s:%d: unfinished string" % (where, line_of(src, i)))
            emit(src[i : j + 1])
            i = j + 1
        elif long_bracket(src, i) is not None:
            level = long_bracket(src, i)
            close = "]" + "=" * level + "]"
            end = src.find(close, i + level + 2)
            if end < 0:
                raise LuaError("%s:%d: unfinished long string" % (where, line_of(src, i)))
            emit(src[i : end + len(close)])
            i = end + len(close)
        else:
            j = i + 1
            while j < n and src[j] not in WHITESPACE and src[j] not in "'\"-[":
                j += 1
            emit(src[i:j])
            i = j
    text = "".join(out)
    bad = [ch for ch in text if not (" " <= ch <= "~" or ch in ESCAPES)]
    if bad:
        raise LuaError("%s: %r in the text: keep the scripts printable ASCII" % (where, bad[0]))
    return text


def cxx_lines(text):
    """`text` as C++ string literals of at most WIDTH characters, broken after a space."""
    escaped = [ESCAPES.get(ch, ch) for ch in text]
    lines, start = [], 0
    while start < len(escaped):
        end, width, last_space = start, 0, None
        while end < len(escaped) and width + len(escaped[end]) <= WIDTH:
            width += len(escaped[end])
            if escaped[end] == " ":
                last_space = end
            end += 1
        if end < len(escaped) and last_space is not None and last_space > start:
            end = last_space + 1
        lines.append('"' + "".join(escaped[start:end]) + '"')
        start = end
    return lines


def scripts_of(folder):
    """[(name, path relative to ROOT, text, sha1)] for the .lua files of `folder`, by name."""
    found = []
    for entry in sorted(os.listdir(os.path.join(ROOT, folder))):
        if not entry.endswith(".lua"):
            continue
        name = entry[: -len(".lua")]
        rel = folder + "/" + entry
        if not re.fullmatch(r"[a-z][a-z0-9_]*", name):
            raise LuaError("%s: the name must be a C++ identifier in lower case" % rel)
        with open(os.path.join(ROOT, rel), encoding="utf-8") as f:
            text = minify(f.read(), rel)
        if not text:
            raise LuaError("%s: no code" % rel)
        found.append((name, rel, text, hashlib.sha1(text.encode("ascii")).hexdigest()))
    return found


def header(folder, guard, scripts):
    out = [
        "// Generated from %s/*.lua by scripts/embed-lua.py: do not edit." % folder,
        "// Edit the .lua file, run `python3 scripts/embed-lua.py` and commit both; the test",
        "// scripts.embedded_lua fails while this file differs from what the generator makes. Each",
        "// text is its file without comments, every run of whitespace collapsed to one space; the",
        "// SHA1 is the text's (what EVALSHA sends). Script: core/script.hpp.",
        "#ifndef " + guard,
        "#define " + guard,
        "",
        '#include "core/script.hpp"',
        "",
        "// clang-format off",
        "namespace resplock::detail {",
    ]
    for name, rel, text, sha1 in scripts:
        out += ["", "// %s (%d bytes)" % (rel, len(text))]
        out += ['inline constexpr char %s_sha1[] = "%s";' % (name, sha1),
                "inline constexpr char %s_text[] =" % name]
        lines = cxx_lines(text)
        out += ["    " + line for line in lines[:-1]] + ["    " + lines[-1] + ";"]
        out += ["inline constexpr Script %s_script = {{%s_sha1, %d}, {%s_text, %d}};"
                % (name, name, len(sha1), name, len(text))]
    out += ["", "}  // namespace resplock::detail", "// clang-format on", "",
            "#endif  // " + guard, ""]
    return "\n".join(out)


def generate(dest):
    """Writes every group's header under `dest`; returns the paths written, relative to it."""
    written = []
    for folder, target, guard in GROUPS:
        path = os.path.join(dest, target)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w", encoding="ascii", newline="\n") as f:
            f.write(header(folder, guard, scripts_of(folder)))
        written.append(target)
    return written


def check():
    with tempfile.TemporaryDirectory() as tmp:
        failed = 0
        for target in generate(tmp):
            with open(os.path.join(tmp, target), encoding="ascii") as f:
                want = f.read()
            try:
                with open(os.path.join(ROOT, target), encoding="ascii") as f:
                    have = f.read()
            except OSError as e:
                have = ""
                print("FAIL: %s: %s" % (target, e.strerror))
            if have != want:
                failed += 1
                print("FAIL: %s differs from what scripts/embed-lua.py makes of its .lua files "
                      "(run it and commit the result):" % target)
                sys.stdout.writelines(difflib.unified_diff(
                    have.splitlines(True), want.splitlines(True), "committed/" + target,
                    "generated/" + target))
        count = sum(len(scripts_of(folder)) for folder, _, _ in GROUPS)
        if failed:
            print("%d of %d generated headers differ" % (failed, len(GROUPS)))
            return 1
        print("OK: %d generated headers, %d scripts, match their .lua files" % (len(GROUPS), count))
        return 0


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--check", action="store_true",
                      help="compare the committed headers with freshly generated ones")
    mode.add_argument("--out", metavar="DIR", help="write the headers under DIR")
    mode.add_argument("--print", action="store_true", help="print each script's text")
    args = parser.parse_args()
    try:
        if args.check:
            return check()
        if args.print:
            for folder, _, _ in GROUPS:
                for name, rel, text, sha1 in scripts_of(folder):
                    print("%s %s %d %s\n%s\n" % (name, sha1, len(text), rel, text))
            return 0
        for target in generate(args.out or ROOT):
            print("wrote " + os.path.join(args.out or ROOT, target))
        return 0
    except LuaError as e:
        print("embed-lua.py: " + str(e), file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
