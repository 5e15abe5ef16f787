#!/usr/bin/env python3
"""Checks the size limits docs/design.md ("Size limits") sets on the code, so they hold.

  - no source file git tracks (C++, Python, shell; outside git, every one but the build
    folders') is over 600 lines;
  - `Replica` (sim/replica/replica.h) has at most 24 data members: state of one mode or one
    concern is grouped in a named struct (spec_, lora_, v0_, ...), so a new mode adds one member;
  - `CostModel` (models/cost_model.h) declares at most three virtual functions (its destructor
    counted);
  - no command's `run()` (sim/app/cmd_*.cpp) is over 60 lines: a command reads its flags into an
    options struct and calls the library.

  scripts/check_structure.py       prints each limit and the worst offender; exits 1 when one is
                                   over its limit, naming the file and the count.

The counts are textual (no compiler): a data member is a line of the class body at two spaces of
indent that ends in `name_;`, `name_ = ...;` or `name_{...};`; a run() body runs from its
`  int run(std::ostream` line to the first line that is exactly `  }`.
"""
import os
import re
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MAX_FILE_LINES = 600
MAX_REPLICA_MEMBERS = 24
MAX_COST_MODEL_VIRTUALS = 3
MAX_RUN_LINES = 60
SOURCE = re.compile(r"\.(cpp|h|py|sh)$")
MEMBER = re.compile(r"^  [^/(\s][^/(]*\b[a-z_0-9]+_( = [^;]*|\{[^;]*\})?;")


def tracked_sources():
    """The source files git tracks; in a copy without .git (CI's fresh copy), every source file
    but those under build folders, out/, .git and node_modules (as scripts/check_format.sh does)."""
    git = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True)
    if git.returncode == 0:
        return [p for p in git.stdout.splitlines() if SOURCE.search(p)]
    found = []
    for top, dirs, names in os.walk(ROOT):
        rel_top = os.path.relpath(top, ROOT)
        dirs[:] = sorted(d for d in dirs if not (
            rel_top == "." and (d.startswith("build") or d in ("out", ".git", "node_modules"))))
        found += [os.path.normpath(os.path.join(rel_top, n)) for n in names if SOURCE.search(n)]
    return sorted(found)


def read_lines(rel):
    with open(os.path.join(ROOT, rel), encoding="utf-8", errors="replace") as f:
        return f.read().splitlines()


def class_body(lines, name, rel):
    """The lines of `class NAME ... {` up to its closing `};` at column 0."""
    start = next((i for i, l in enumerate(lines) if re.match(rf"class {name}\b", l)), None)
    if start is None:
        sys.exit(f"check_structure: {rel}: no line starts with 'class {name}'")
    end = next(i for i in range(start, len(lines)) if lines[i] == "};")
    return lines[start + 1:end]


def run_lengths():
    found = []
    app = os.path.join(ROOT, "sim", "app")
    for name in sorted(os.listdir(app)):
        if not (name.startswith("cmd_") and name.endswith(".cpp")):
            continue
        rel = os.path.join("sim", "app", name)
        lines = read_lines(rel)
        for i, line in enumerate(lines):
            if line.startswith("  int run(std::ostream"):
                end = next(j for j in range(i, len(lines)) if lines[j] == "  }")
                found.append((end - i + 1, rel))
    return found


def main():
    failures = []

    files = sorted(((len(read_lines(p)), p) for p in tracked_sources()), reverse=True)
    longest = files[0]
    print(f"longest source file: {longest[1]} ({longest[0]} lines; limit {MAX_FILE_LINES})")
    failures += [f"{p}: {n} lines, over {MAX_FILE_LINES}" for n, p in files if n > MAX_FILE_LINES]

    rel = "sim/replica/replica.h"
    members = [l.strip() for l in class_body(read_lines(rel), "Replica", rel) if MEMBER.match(l)]
    print(f"Replica data members: {len(members)} (limit {MAX_REPLICA_MEMBERS})")
    if len(members) > MAX_REPLICA_MEMBERS:
        failures.append(f"{rel}: Replica has {len(members)} data members, over "
                        f"{MAX_REPLICA_MEMBERS}: group a mode's state in a struct")

    rel = "models/cost_model.h"
    virtuals = [l for l in class_body(read_lines(rel), "CostModel", rel)
                if re.match(r"^\s+virtual\b", l)]
    print(f"CostModel virtual functions: {len(virtuals)} (limit {MAX_COST_MODEL_VIRTUALS})")
    if len(virtuals) > MAX_COST_MODEL_VIRTUALS:
        failures.append(f"{rel}: CostModel declares {len(virtuals)} virtual functions, over "
                        f"{MAX_COST_MODEL_VIRTUALS}")

    runs = sorted(run_lengths(), reverse=True)
    if not runs:
        sys.exit("check_structure: no '  int run(std::ostream' line in sim/app/cmd_*.cpp")
    print(f"longest command run(): {runs[0][1]} ({runs[0][0]} lines; limit {MAX_RUN_LINES})")
    failures += [f"{p}: run() is {n} lines, over {MAX_RUN_LINES}" for n, p in runs
                 if n > MAX_RUN_LINES]

    for f in failures:
        print(f"over the limit: {f}", file=sys.stderr)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
