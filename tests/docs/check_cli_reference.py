#!/usr/bin/env python3
"""Checks that the tool's references never disagree (test docs.cli_reference).

Four sources state what `resplock` takes, each parsed from its own form, never from a list kept
here:
  - the help: `resplock --help` of the built binary (--resplock);
  - the man page (--man, roff): the tags of OPTIONS, COMMANDS and EXIT STATUS, the table of
    "Which commands take each option", the companion keys it names;
  - docs/cli.md (--doc): the option table of "## Options", the table of "### Which commands take
    each option", the commands of "## Synopsis", the table of "## Exit codes", the companion keys;
  - the completions: bash (--bash: sourced in bash, COMPREPLY read for `resplock -` and
    `resplock `) and zsh (--zsh: the option specs of _arguments and the commands= list).

What must agree:
  - options: the same long options, with the same short aliases and value names, in the help,
    both man page lists and both docs tables; the completions offer exactly those spellings;
  - commands: the same in help, man page, docs and both completions;
  - exit codes: the same numbers in help, man page and docs;
  - companion keys ({KEY}:name): the same in man page and docs; the help names a few of them
    ("{KEY}:wake..."), each of which must be among those;
  - which commands take each option: the man page's table equals the docs table; each option's
    help entry names no command outside that set, and names at least one when the set is neither
    all nor none (HELP_SILENT lists the entries that state it otherwise).

Every disagreement is one FAIL line naming the source and the option, command, code or key.

  check_cli_reference.py --resplock BIN --man FILE --doc FILE --bash FILE --zsh FILE
"""
import argparse
import re
import shlex
import subprocess
import sys

# Help entries that name none of the commands their option applies to, and why that is allowed.
HELP_SILENT = {
    "--ttl": "the help describes the lock's time-to-live; that acquire, extend and run set it is "
             "plain from those commands' own lines",
}

failures = []


def fail(text):
    failures.append(text)
    print("FAIL: " + text, flush=True)


def compare(what, named):
    """named: [(source, set)]; every set must equal the first one. Names each difference."""
    ref_name, ref = named[0]
    for name, items in named[1:]:
        for x in sorted(ref - items):
            fail("%s: %s (in %s) is missing from %s" % (what, x, ref_name, name))
        for x in sorted(items - ref):
            fail("%s: %s (in %s) is not in %s" % (what, x, name, ref_name))


# ---------------------------------------------------------------------------------------------
# The help.

HELP_OPTION = re.compile(r"^(?:  (-[A-Za-z0-9]), |      )(--[a-z][a-z0-9-]*)(?:[ =]([A-Z][A-Z_]*))?(?:\s|$)")


def parse_help(text):
    lines = text.splitlines()
    options = {}  # long -> (short, value)
    entries = {}  # long -> its text
    commands = []
    codes = set()
    section = None
    current = None
    for line in lines:
        if re.match(r"^Commands:", line):
            section = "commands"
            continue
        if re.match(r"^Options\b", line):
            section = "options"
            continue
        if re.match(r"^Exit status:", line):
            section = "exit"
            continue
        if re.match(r"^Examples:", line):
            section = None
            continue
        if section == "commands":
            m = re.match(r"^  ([a-z][a-z-]*)\b", line)
            if m:
                commands.append(m.group(1))
            elif not line.strip():
                section = None
        elif section == "options":
            m = HELP_OPTION.match(line)
            if m:
                short, long_, value = m.groups()
                options[long_] = (short, value)
                entries[long_] = line
                current = long_
            elif current and re.match(r"^ {20,}\S", line):
                entries[current] += "\n" + line
            else:
                current = None
        elif section == "exit":
            m = re.match(r"^\s+(\d+)\s\s", line)
            if m:
                codes.add(int(m.group(1)))
    keys = set(re.findall(r"\{KEY\}:[a-z]+(?::[A-Z]+)?", text))
    return options, entries, commands, codes, keys


# ---------------------------------------------------------------------------------------------
# The man page.

def roff_text(line):
    """The text a roff line shows, without fonts: '.BR \\-u ", " \\-\\-url' -> '-u, --url'."""
    s = line
    joined = False
    if s.startswith("."):
        m = re.match(r"^\.(\S+)\s*(.*)$", s)
        macro, rest = m.group(1), m.group(2)
        joined = bool(re.match(r"^(BR|RB|BI|IB|IR|RI)$", macro))
        try:
            args = shlex.split(rest.replace("\\", "\\\\"), posix=True)
        except ValueError:
            args = rest.split()
        s = ("" if joined else " ").join(args)
    s = re.sub(r"\\f(\[[^]]*\]|.)", "", s)
    s = s.replace("\\-", "-").replace("\\(aq", "'").replace("\\~", " ").replace("\\&", "")
    s = re.sub(r"\\\(..", "", s)
    return s.strip()


def parse_man(text):
    lines = text.splitlines()
    section = None
    sub = None
    tags = {"OPTIONS": [], "COMMANDS": [], "EXIT STATUS": []}
    table = {}
    in_table = False
    format_done = False
    shown = []
    i = 0
    while i < len(lines):
        line = lines[i]
        if line.startswith(".SH"):
            section = roff_text(line)
            sub = None
        elif line.startswith(".SS"):
            sub = roff_text(line)
        elif line.startswith(".TS"):
            in_table, format_done = True, False
        elif line.startswith(".TE"):
            in_table = False
        elif in_table:
            if not format_done:
                format_done = line.rstrip().endswith(".")
            elif line.strip() not in ("_", "=") and "\t" in line:
                option, cmds = line.split("\t", 1)
                option, cmds = roff_text(option), roff_text(cmds)
                if option != "OPTION":
                    table[option] = cmds
        elif line.startswith(".TP") and i + 1 < len(lines) and section in tags and sub is None:
            tags[section].append(roff_text(lines[i + 1]))
        if not line.startswith(".\\\""):
            shown.append(roff_text(line))
        i += 1
    keys = set(re.findall(r"\{KEY\}:[a-z]+(?::[A-Z]+)?", "\n".join(shown)))
    return tags, table, keys


def option_of(spelling):
    """'-u, --url URL' -> ('--url', '-u', 'URL'); '--fence' -> ('--fence', None, None)."""
    m = re.match(r"^(?:(-[A-Za-z0-9]), )?(--[a-z][a-z0-9-]*)(?:[ =]([A-Z][A-Z_]*))?$",
                 spelling.strip())
    if not m:
        return None
    return m.group(2), m.group(1), m.group(3)


# ---------------------------------------------------------------------------------------------
# docs/cli.md.

def md_section(text, heading):
    """The lines of the section under a heading (up to the next heading of its level or above)."""
    lines = text.splitlines()
    level = len(heading) - len(heading.lstrip("#"))
    out = None
    for line in lines:
        if out is None:
            if line.strip() == heading:
                out = []
            continue
        m = re.match(r"^(#+)\s", line)
        if m and len(m.group(1)) <= level:
            break
        out.append(line)
    return out or []


def md_rows(lines):
    """The cells of the first table among lines, header and rule left out."""
    rows = []
    started = False
    for line in lines:
        if line.startswith("|"):
            started = True
            cells = [c.strip() for c in line.strip().strip("|").split("|")]
            if all(re.match(r"^:?-+:?$", c) for c in cells):
                continue
            rows.append(cells)
        elif started:
            break
    return rows[1:]


def parse_doc(text):
    # The option table: every option its first column names.
    option_names = set()
    for cells in md_rows(md_section(text, "## Options")):
        for span in re.findall(r"`([^`]*)`", cells[0]):
            option_names.update(re.findall(r"(?<![\w-])(--?[A-Za-z0-9][a-z0-9-]*)", span))
    # Which commands take each option.
    table = {}
    for cells in md_rows(md_section(text, "### Which commands take each option")):
        spelling = re.sub(r"`", "", cells[0])
        cmds = re.sub(r"\s*\(.*\)\s*$", "", cells[1])  # "all (why)" -> "all"
        table[spelling] = cmds.replace("`", "")
    commands = []
    for line in md_section(text, "## Synopsis"):
        m = re.match(r"^resplock \[OPTIONS\] ([a-z][a-z-]*)\b", line)
        if m:
            commands.append(m.group(1))
    codes = set()
    for cells in md_rows(md_section(text, "## Exit codes")):
        if re.match(r"^\d+$", cells[0]):
            codes.add(int(cells[0]))
    keys = set(re.findall(r"\{KEY\}:[a-z]+(?::[A-Z]+)?", text))
    return option_names, table, commands, codes, keys


# ---------------------------------------------------------------------------------------------
# The completions.

def bash_complete(script, words):
    """COMPREPLY of the bash completion for the command line words (the last one is completed)."""
    line = " ".join(shlex.quote(w) for w in words)
    program = (
        "set -u\nsource %s\nCOMP_WORDS=(%s)\nCOMP_CWORD=%d\nCOMP_LINE=%s\nCOMP_POINT=${#COMP_LINE}\n"
        "_resplock resplock %s %s\nprintf '%%s\\n' \"${COMPREPLY[@]}\"\n"
        % (shlex.quote(script), line, len(words) - 1, shlex.quote(" ".join(words)),
           shlex.quote(words[-1]), shlex.quote(words[-2] if len(words) > 1 else "")))
    r = subprocess.run(["bash", "--norc", "--noprofile", "-c", program], stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, universal_newlines=True)
    if r.returncode != 0:
        fail("bash completion of %r failed (exit %d): %s" % (words, r.returncode, r.stderr.strip()))
    return set(x for x in r.stdout.splitlines() if x)


def parse_zsh(text):
    options = set()
    commands = set()
    in_commands = False
    for line in text.splitlines():
        m = re.match(r"^\s*(?:'\([^)]*\)')?(?:'\*')?(?:\{([^}]*)\}|'(?:\([^)]*\))?\*?(--?[A-Za-z0-9][\w-]*))",
                     line)
        if m and "[" in line:
            names = m.group(1).split(",") if m.group(1) else [m.group(2)]
            options.update(n.rstrip("+=-") if not n.startswith("--") or n.endswith(("=", "+"))
                           else n for n in names)
        if re.match(r"^\s*commands=\($", line):
            in_commands = True
            continue
        if in_commands:
            m = re.match(r"^\s*'([a-z][a-z-]*):", line)
            if m:
                commands.add(m.group(1))
            elif line.strip() == ")":
                in_commands = False
    options = set(o.rstrip("=+") for o in options)
    return options, commands


# ---------------------------------------------------------------------------------------------

def command_set(cell, all_commands, where, option):
    cell = cell.strip()
    if cell == "all":
        return set(all_commands)
    if cell == "none":
        return set()
    named = set(c.strip() for c in cell.split(","))
    for c in sorted(named - set(all_commands)):
        fail("%s: %s applies to '%s', which is no command" % (where, option, c))
    return named


def main():
    ap = argparse.ArgumentParser()
    for name in ("resplock", "man", "doc", "bash", "zsh"):
        ap.add_argument("--" + name, required=True)
    a = ap.parse_args()

    r = subprocess.run([a.resplock, "--help"], stdout=subprocess.PIPE, universal_newlines=True)
    if r.returncode != 0:
        fail("resplock --help exited with %d" % r.returncode)
    help_options, help_entries, help_commands, help_codes, help_keys = parse_help(r.stdout)
    man_tags, man_table, man_keys = parse_man(open(a.man, encoding="utf-8").read())
    doc_names, doc_table, doc_commands, doc_codes, doc_keys = parse_doc(
        open(a.doc, encoding="utf-8").read())
    if len(help_options) < 5 or len(help_commands) < 3 or len(help_codes) < 3:
        fail("the help could not be read: %d options, %d commands, %d exit codes"
             % (len(help_options), len(help_commands), len(help_codes)))

    # Options: (long, short, value) as each source spells them.
    def spelled(source, spellings):
        out = set()
        for s in spellings:
            o = option_of(s)
            if o is None:
                fail("%s: cannot read the option '%s'" % (source, s))
            else:
                out.add("%s%s%s" % (o[1] + ", " if o[1] else "", o[0], " " + o[2] if o[2] else ""))
        return out

    help_spelled = set("%s%s%s" % (s + ", " if s else "", l, " " + v if v else "")
                       for l, (s, v) in help_options.items())
    compare("option", [("the help", help_spelled),
                       ("the man page's OPTIONS", spelled("man page OPTIONS", man_tags["OPTIONS"])),
                       ("the man page's table", spelled("man page table", man_table)),
                       ("docs/cli.md's table of commands", spelled("docs/cli.md", doc_table))])
    help_names = set(help_options) | set(s for s, _ in help_options.values() if s)
    compare("option", [("the help", help_names), ("docs/cli.md's option table", doc_names)])

    # Commands.
    man_commands = [t.split()[0] for t in man_tags["COMMANDS"] if t.split()]
    compare("command", [("the help", set(help_commands)), ("the man page", set(man_commands)),
                        ("docs/cli.md's synopsis", set(doc_commands))])

    # Exit codes.
    man_codes = set(int(t) for t in man_tags["EXIT STATUS"] if re.match(r"^\d+$", t))
    compare("exit code", [("the help", help_codes), ("the man page", man_codes),
                          ("docs/cli.md", doc_codes)])

    # Companion keys.
    compare("companion key", [("docs/cli.md", doc_keys), ("the man page", man_keys)])
    for k in sorted(help_keys - doc_keys):
        fail("companion key: %s (in the help) is not in docs/cli.md" % k)
    if not help_keys:
        fail("companion key: the help names none")

    # Which commands take each option.
    man_by_long = {}
    for spelling, cmds in man_table.items():
        o = option_of(spelling)
        if o:
            man_by_long[o[0]] = command_set(cmds, help_commands, "man page", o[0])
    doc_by_long = {}
    for spelling, cmds in doc_table.items():
        o = option_of(spelling)
        if o:
            doc_by_long[o[0]] = command_set(cmds, help_commands, "docs/cli.md", o[0])
    for long_ in sorted(set(man_by_long) & set(doc_by_long)):
        if man_by_long[long_] != doc_by_long[long_]:
            fail("%s applies to %s in the man page but to %s in docs/cli.md"
                 % (long_, sorted(man_by_long[long_]), sorted(doc_by_long[long_])))
    for long_, entry in sorted(help_entries.items()):
        if long_ not in man_by_long:
            continue
        table = man_by_long[long_]
        named = set(c for c in help_commands if re.search(r"(?<![\w-])%s(?![\w-])" % c, entry))
        for c in sorted(named - table):
            fail("%s: its help entry names '%s', which its table row does not list (%s)"
                 % (long_, c, ", ".join(sorted(table)) or "none"))
        if table and table != set(help_commands) and not named and long_ not in HELP_SILENT:
            fail("%s: its help entry names none of the commands it applies to (%s)"
                 % (long_, ", ".join(sorted(table))))

    # Completions: exactly what the help lists.
    bash_options = bash_complete(a.bash, ["resplock", "-"])
    compare("option", [("the help", help_names), ("the bash completion", bash_options)])
    bash_commands = bash_complete(a.bash, ["resplock", ""])
    compare("command", [("the help", set(help_commands)), ("the bash completion", bash_commands)])
    zsh_options, zsh_commands = parse_zsh(open(a.zsh, encoding="utf-8").read())
    compare("option", [("the help", help_names), ("the zsh completion", zsh_options)])
    compare("command", [("the help", set(help_commands)), ("the zsh completion", zsh_commands)])

    print("%d options, %d commands, %d exit codes, %d companion keys compared across help, man "
          "page, docs/cli.md and completions" % (len(help_options), len(help_commands),
                                                 len(help_codes), len(doc_keys)))
    if failures:
        print("%d failure%s" % (len(failures), "" if len(failures) == 1 else "s"))
        return 1
    print("docs.cli_reference: all agree")
    return 0


if __name__ == "__main__":
    sys.exit(main())
