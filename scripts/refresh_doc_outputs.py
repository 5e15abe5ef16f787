#!/usr/bin/env python3
"""Re-runs every `servesim ...` command block in a Markdown page and replaces the output block that
follows it with the command's real output, so pages that show outputs stay true after a change of
the model or the catalogs.

A command block is a fenced block whose first line starts with "servesim "; its output block is the
fenced block right after it (blank lines between allowed). A line "stderr: `...`" right after the
output block, if present, is replaced by the command's last stderr line. Commands run in a
temporary folder with SOURCE_DATE_EPOCH=0, with the build's binary, and R / S set as the docs use
them.

A terminal block is a fenced block whose first line starts with "$ servesim " (docs/sweeps.md): the
command (with its "\\"-continued lines) and, below it in the same block, what it printed: stdout,
then stderr. Its output is replaced in place. A page may abbreviate that output: a line starting
with "..." stands for lines left out, and "(...)" inside a line for a parenthesised part left out.
When the page's output has either, the refresh keeps the same abbreviation: each line the page
shows is matched, in order, with the first following line of the new output that has the same words
(numbers and the "(...)" part may differ, names such as P99 or TP4 may not, runs of spaces may
change width), and only the matched lines are written back, with "(...)" in place of the same
parenthesised part; the "..." lines stay where they were. If a shown line has no match (its words changed, e.g. "faster" became "no
significant difference"), the block is left as it was, the page is named on stderr, and the exit
code is 1: edit that abbreviation by hand.

A stderr line that differs from the page's only in its wall time and thread count ("in 0.35 s wall
on 2 threads"), and plan's count of simulations run ("(102 run)"), is left as the page has it, so that a refresh with unchanged outputs leaves the page
unchanged; --timings writes the new wall times too.

--check writes nothing: it exits 1, with the differing lines, when a page shows an output this
build no longer prints (the ctest docs.outputs_up_to_date runs it on every page).

The binary is build/servesim, or $SERVESIM_BIN.

Usage: scripts/refresh_doc_outputs.py [--timings] [--check] docs/capacity-planning.md [more pages]
"""
import difflib
import os
import re
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BIN = os.environ.get("SERVESIM_BIN") or os.path.join(ROOT, "build", "servesim")
FENCE = re.compile(r"^```[a-z]*\n(.*?)^```\n", re.S | re.M)
# The wall time and the thread count (all cores by default) depend on the machine, not the model;
# so does plan's count of simulations run beyond those its results rest on ("(102 run)": work on
# candidates a thread had started before the cheapest verified one stopped them).
WALL = re.compile(r"(?:\([0-9]+ run\) )?\bin [0-9.]+ s wall(?: on [0-9]+ threads?)?\b")
# A number as the outputs print them: 12, -139.43, +2.62, 1,024, 1.5e-05, x2.6; digits right after
# another letter belong to a name (P99, TP4, h100).
NUMBER = r"(?<![0-9A-Za-wyz_])[-+]?[0-9]+(?:[.,][0-9]+)*(?:e[-+]?[0-9]+)?"
ELIDED_PART = "(...)"


def run_full(command, workdir):
    """The command's stdout and stderr (whole texts)."""
    cmd = command.replace("\\\n", " ").strip()
    cmd = BIN + cmd[len("servesim"):]
    env = dict(os.environ, SOURCE_DATE_EPOCH="0",
               R=os.path.join(ROOT, "data", "realdata"),
               S=os.path.join(ROOT, "tests", "data", "realdata_sidecars"))
    p = subprocess.run(["bash", "-c", cmd], cwd=workdir, env=env, capture_output=True, text=True)
    return p.stdout, p.stderr


def run(command, workdir):
    stdout, stderr = run_full(command, workdir)
    return stdout, stderr.strip().splitlines()[-1:] if stderr.strip() else []


def differ_in_wall_time_only(old, new):
    return WALL.search(old) is not None and WALL.sub("", old) == WALL.sub("", new)


def keep_timing(old, new, timings):
    """`old` when the two lines differ only in their wall time (and --timings is off), else `new`."""
    return old if not timings and differ_in_wall_time_only(old, new) else new


def is_elision_line(line):
    return line.lstrip().startswith("...")


def line_pattern(shown):
    """A regex matching the output lines that `shown` (a line as the page shows it) abbreviates:
    the same words and names, any numbers, any parenthesised part at a "(...)" (captured), and runs of spaces
    of any width."""
    regex = ""
    for i, part in enumerate(re.split("(" + re.escape(ELIDED_PART) + "|" + NUMBER + ")",
                                      shown.rstrip())):
        if i % 2 == 0:
            regex += r"\s*".join(re.escape(words) for words in re.split(r"\s+", part))
        elif part == ELIDED_PART:
            regex += r"(\([^()]*(?:\([^()]*\)[^()]*)*\))"
        else:
            regex += NUMBER
    return re.compile("^" + regex + r"\s*$")


def abbreviate(shown_lines, new_lines, timings):
    """The new output abbreviated as the page abbreviates `shown_lines`; None if a shown line has no
    match."""
    result, j = [], 0
    for shown in shown_lines:
        if is_elision_line(shown):
            result.append(shown)
            continue
        pattern = line_pattern(shown)
        for k in range(j, len(new_lines)):
            m = pattern.match(new_lines[k])
            if m:
                break
        else:
            print(f"  no match in the new output for the shown line: {shown!r}", file=sys.stderr)
            return None
        line = new_lines[k]
        for g in range(len(m.groups()), 0, -1):
            line = line[:m.start(g)] + ELIDED_PART + line[m.end(g):]
        result.append(keep_timing(shown, line, timings))
        j = k + 1
    return result


def refresh_terminal_block(body, workdir, timings):
    """The new body of a "$ servesim" block, or None when its abbreviation no longer matches."""
    lines = body.split("\n")[:-1]  # the body ends with "\n"
    n = 1
    while n < len(lines) and lines[n - 1].endswith("\\"):
        n += 1
    command = "\n".join(lines[:n])[len("$ "):]
    shown = lines[n:]
    stdout, stderr = run_full(command, workdir)
    output = stdout + ("" if stdout == "" or stdout.endswith("\n") else "\n") + stderr
    new = output.split("\n")
    if new and new[-1] == "":
        new.pop()
    if any(is_elision_line(s) or ELIDED_PART in s for s in shown):
        new = abbreviate(shown, new, timings)
        if new is None:
            return None
    else:
        walls = [] if timings else [s for s in shown if WALL.search(s)]
        new = [next((s for s in walls if differ_in_wall_time_only(s, line)), line) for line in new]
    return "\n".join(lines[:n] + new) + "\n"


def refresh(path, timings=False, check=False):
    text = open(path).read()
    out, pos, changed, failed = [], 0, 0, 0
    blocks = list(FENCE.finditer(text))
    with tempfile.TemporaryDirectory() as workdir:
        i = 0
        while i < len(blocks):
            b = blocks[i]
            body = b.group(1)
            nxt = blocks[i + 1] if i + 1 < len(blocks) else None
            if body.startswith("servesim ") and nxt and text[b.end():nxt.start()].strip() == "":
                stdout, stderr = run(body, workdir)
                out.append(text[pos:nxt.start()])
                out.append("```\n" + stdout + ("" if stdout.endswith("\n") else "\n") + "```\n")
                pos = nxt.end()
                tail = re.match(r"stderr: `([^`]*)`\n", text[pos:])
                if tail and stderr:
                    line = keep_timing(tail.group(1), stderr[0].replace("`", "'"), timings)
                    out.append("stderr: `" + line + "`\n")
                    pos += tail.end()
                changed += 1
                i += 2
                continue
            if body.startswith("$ servesim "):
                new_body = refresh_terminal_block(body, workdir, timings)
                if new_body is None:
                    line = text.count("\n", 0, b.start()) + 1
                    print(f"{path}:{line}: the block's abbreviated output no longer matches the "
                          "command's output; left as it was", file=sys.stderr)
                    failed += 1
                else:
                    out.append(text[pos:b.start(1)] + new_body + "```\n")
                    pos = b.end()
                    changed += 1
            i += 1
    out.append(text[pos:])
    new_text = "".join(out)
    if check:
        if new_text != text:
            diff = list(difflib.unified_diff(text.splitlines(), new_text.splitlines(), path,
                                             path + " as this build prints it", lineterm="", n=1))
            print("\n".join(diff[:60] + (["..."] if len(diff) > 60 else [])), file=sys.stderr)
            print(f"{path}: shows outputs this build no longer prints; refresh them with "
                  f"scripts/refresh_doc_outputs.py {path}", file=sys.stderr)
            return False
        print(f"{path}: {changed} command outputs checked, all current" +
              (f"; {failed} could not be matched" if failed else ""))
        return failed == 0
    open(path, "w").write(new_text)
    print(f"{path}: {changed} command outputs refreshed" +
          (f", {failed} left as they were" if failed else ""))
    return failed == 0


if __name__ == "__main__":
    args = sys.argv[1:]
    timings = "--timings" in args
    check = "--check" in args
    pages = [a for a in args if a not in ("--timings", "--check")]
    ok = all([refresh(page, timings, check) for page in pages])
    sys.exit(0 if ok else 1)
