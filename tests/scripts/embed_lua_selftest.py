#!/usr/bin/env python3
"""Checks scripts/embed-lua.py itself: the minifier keeps Lua's meaning (strings, long strings,
separators) while it drops comments and collapses whitespace, the C++ literals it writes quote
what they must, it refuses what it cannot carry, and --check fails once a .lua file changed."""

import importlib.util
import os
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
GENERATOR = os.path.join(ROOT, "scripts", "embed-lua.py")

spec = importlib.util.spec_from_file_location("embed_lua", GENERATOR)
embed = importlib.util.module_from_spec(spec)
spec.loader.exec_module(embed)

failures = 0


def check(what, got, want):
    global failures
    if got != want:
        failures += 1
        print("FAIL: %s: got %r, want %r" % (what, got, want))


def refused(what, src):
    global failures
    try:
        embed.minify(src, "t.lua")
    except embed.LuaError:
        return
    failures += 1
    print("FAIL: %s: accepted %r" % (what, src))


MINIFY = [
    ("whitespace runs and newlines become one space, none at the ends",
     "\n  local a=1\n\n\tif a then\r\n  return a  end \n", "local a=1 if a then return a end"),
    ("a line comment goes, its newline separates", "local a=1 -- one\nreturn a", "local a=1 return a"),
    ("a comment between tokens still separates them", "return--[[x]]a", "return a"),
    ("a long comment of level 2", "a=1 --[==[ ]] ]=] ]==] b=2", "a=1 b=2"),
    ("a comment-only line", "-- KEYS[1]: the key\nreturn 1\n-- the end", "return 1"),
    ("--[ alone is a line comment", "--[ not long\nreturn 1", "return 1"),
    ("a string keeps its spaces and dashes", "return '  -- a  b '", "return '  -- a  b '"),
    ("escaped quotes stay inside the string", r"""return 'it\'s -- "x"' """, r"""return 'it\'s -- "x"'"""),
    ("a backslash ends no string", r"return 'a\\' --c", r"return 'a\\'"),
    ("double quotes", 'return "a  \'b\'  c"', 'return "a  \'b\'  c"'),
    ("a long string keeps its newlines", "return [[a\n  -- b]]", "return [[a\n  -- b]]"),
    ("index brackets are no long string", "return k[ 1 ]", "return k[ 1 ]"),
    ("minus and subtraction", "return a - -1", "return a - -1"),
    ("no separator is invented", "local k,a=KEYS,ARGV", "local k,a=KEYS,ARGV"),
]
for what, src, want in MINIFY:
    check(what, embed.minify(src, "t.lua"), want)

refused("an unfinished string", "return 'abc")
refused("a string across lines", "return 'a\nb'")
refused("an unfinished long comment", "--[[ never closed\nreturn 1")
refused("an unfinished long string", "return [==[ x ]]")
refused("a non-ASCII byte", "return 'caf\u00e9'")

# C++ literals: quotes and backslashes escaped, lines at most embed.WIDTH characters of text,
# broken after a space, and together exactly the text.
text = 'return "a\\\\b" ' + " ".join("w%02d" % i for i in range(60))
lines = embed.cxx_lines(text)
check("literal lines fit", [len(line) - 2 <= embed.WIDTH for line in lines], [True] * len(lines))
check("literal lines break after a space", all(line[-2] == " " for line in lines[:-1]), True)
check("literals read back as the text",
      "".join(line[1:-1] for line in lines).replace('\\"', '"').replace("\\\\", "\\"), text)
check("a long string's newline and tab are escaped", embed.cxx_lines("[[a\n\tb]]"),
      ['"[[a\\n\\tb]]"'])
check("a quote is escaped", lines[0].startswith('"return \\"a\\\\\\\\b\\" '), True)

# --check passes on the committed tree, and fails after a change to a .lua file's code.
with tempfile.TemporaryDirectory() as tmp:
    os.makedirs(os.path.join(tmp, "scripts"))
    shutil.copy(GENERATOR, os.path.join(tmp, "scripts"))
    for folder, target, _ in embed.GROUPS:
        shutil.copytree(os.path.join(ROOT, folder), os.path.join(tmp, folder))
        shutil.copy(os.path.join(ROOT, target), os.path.join(tmp, target))
    run = [sys.executable, os.path.join(tmp, "scripts", "embed-lua.py"), "--check"]
    done = subprocess.run(run, stdout=subprocess.PIPE, universal_newlines=True)
    check("--check on the committed files", done.returncode, 0)
    owner = os.path.join(tmp, "src", "core", "lua", "owner.lua")
    with open(owner, encoding="utf-8") as f:
        src = f.read()
    with open(owner, "w", encoding="utf-8") as f:
        f.write(src.replace("r('del',k)", "r('unlink',k)"))
    done = subprocess.run(run, stdout=subprocess.PIPE, universal_newlines=True)
    check("--check after a change to owner.lua", done.returncode, 1)
    check("--check names the stale header",
          "FAIL: src/core/lua_scripts.hpp differs" in done.stdout, True)
    with open(owner, "w", encoding="utf-8") as f:
        f.write("-- only a comment changed\n" + src)
    done = subprocess.run(run, stdout=subprocess.PIPE, universal_newlines=True)
    check("--check after a change to a comment only", done.returncode, 0)

if failures:
    print("%d failure(s)" % failures)
    sys.exit(1)
print("OK: embed-lua.py minifies, quotes and checks as it should")
