#!/usr/bin/env python3
"""Runs every command block of README.md and docs/ (docs/*.md, docs/howto/*.md) as a reader would:
on a fresh copy of the repository, page by page, and fails on any non-zero exit.

What runs (the convention the pages follow; README.md, "Testing and CI"):
- a fenced block tagged bash, sh, shell or console: the whole block, as one script; if some of its
  lines start with "$ ", only those lines (and their "\\"-continued lines) are commands and the
  other lines are their output;
- an untagged block whose first line starts with "servesim " or "$ " (the blocks whose output
  scripts/refresh_doc_outputs.py checks), except the block right after a command block (with only
  blank lines between), which is that command's output, and a line that servesim prints
  ("servesim validate: ...", "servesim: error: ...");
- a block tagged python, with the interpreter the pages name (PYTHONPATH=build/python
  /usr/bin/python3); a block starting with ">>>" is a transcript and is not run.
Every other block (outputs, formulas, JSON, YAML, listings) is text. An untagged block whose first
line that is not a "#" comment looks like a command (build/..., scripts/..., python3, mpirun,
vllm, VAR=...) is an error unless it is marked: tag it ```bash (it then runs), or mark it.

A block is marked by an HTML comment, invisible on the rendered page, as the last non-blank line
before its opening fence:
  <!-- illustrative: REASON -->   not run (needs a GPU, a cluster, your own files, ...)
  <!-- slow: REASON -->           run only with --slow (ctest docs.commands_run_slow)
  <!-- exit N: REASON -->         must exit with status N (a block that shows an error)
REASON is required.

How it runs: each page gets its own copy of the checkout's files (git ls-files, untracked files
that git does not ignore included) in a temporary folder, with build/ a link to the build folder,
and `servesim` on PATH as build/servesim (what `export PATH=$PWD/build:$PATH` gives). A page's
blocks run in page order in the same shell state (variables and the working directory carry from
one block to the next, so a page that writes a file and then reads it works), each in bash with
`set -e -o pipefail`, under a time limit (--timeout, seconds). The rest of the environment is
the caller's: `python3` is whichever is first on PATH, as for a reader.

For each failure: page:line of the block, the failing command and line, the exit status, and the
end of what it wrote to stderr. Exit status 0 when every block that ran passed (and no block is
left unclassified), 1 otherwise.

Usage: scripts/run_doc_commands.py [--slow] [--list] [--timeout S] [--build-dir DIR] [--keep]
                                   [PAGE ...]        (default: README.md docs/*.md docs/howto/*.md)
"""
import argparse
import glob
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SHELL_TAGS = {"bash", "sh", "shell", "console"}
FENCE_OPEN = re.compile(r"^(\s*)(```+|~~~+)\s*([A-Za-z0-9_+-]*)\s*$")
MARKER = re.compile(r"^\s*<!--\s*(illustrative|slow|exit\s+(\d+))\s*:\s*(.*?)\s*-->\s*$")
ANY_MARKER = re.compile(r"^\s*<!--\s*(illustrative|slow|exit)\b")
# The first line of an untagged block that reads as a command someone meant to run.
LOOKS_LIKE_COMMAND = re.compile(
    r"^(build/|\./|scripts/|/usr/bin/|python3?\s|mpirun\s|srun\s|cmake\s|cd\s|git\s|pip\s|"
    r"export\s|for\s|vllm\s|servesim\s|[A-Z_][A-Z0-9_]*=)")
# servesim's own stderr lines ("servesim validate: uncalibrated ...") begin like a command.
SERVESIM_OUTPUT = re.compile(r"^servesim \S*:")
# Shell variables that belong to bash itself, not to the page: never carried between blocks.
BASH_OWN = re.compile(r"^declare -\S* (BASH\w*|SHELLOPTS|EUID|UID|PPID|SHLVL|PWD|OLDPWD|RANDOM|"
                      r"SRANDOM|SECONDS|LINENO|_|PIPESTATUS|FUNCNAME|GROUPS|HISTCMD|DIRSTACK|"
                      r"EPOCHSECONDS|EPOCHREALTIME|OPTIND|OPTERR|COMP_WORDBREAKS|HOSTNAME|"
                      r"HOSTTYPE|MACHTYPE|OSTYPE|IFS|PS4)=")
PYTHON = "PYTHONPATH=build/python /usr/bin/python3"


class Block:
    def __init__(self, page, line, tag, body, indent):
        self.page, self.line, self.tag, self.body, self.indent = page, line, tag, body, indent
        self.kind = "text"      # text | shell | python | output | transcript | unmarked-command
        self.mark, self.mark_reason, self.expect = None, "", 0
        self.script = ""        # what runs; its line k + 1 is the page's line self.line + k


def parse(page):
    """The fenced blocks of a page, each with its marker."""
    lines = open(page).read().split("\n")
    blocks, i = [], 0
    while i < len(lines):
        m = FENCE_OPEN.match(lines[i])
        if not m:
            i += 1
            continue
        indent, fence, tag = len(m.group(1)), m.group(2), m.group(3).lower()
        j = i + 1
        while j < len(lines) and not re.match(r"^\s*" + re.escape(fence) + r"\s*$", lines[j]):
            j += 1
        body = [ln[indent:] if ln[:indent].strip() == "" else ln for ln in lines[i + 1:j]]
        b = Block(page, i + 1, tag, body, indent)
        k = i - 1
        while k >= 0 and lines[k].strip() == "":
            k -= 1
        if k >= 0:
            mm = MARKER.match(lines[k])
            if mm:
                b.mark = "exit" if mm.group(2) else mm.group(1)
                b.expect = int(mm.group(2)) if mm.group(2) else 0
                b.mark_reason = mm.group(3)
            elif ANY_MARKER.match(lines[k]):
                b.mark, b.mark_reason = "bad", lines[k].strip()
        b.after_command = blocks and blocks[-1].kind in ("shell", "python") and \
            all(ln.strip() == "" for ln in lines[blocks[-1].end + 1:i])
        b.end = j
        classify(b)
        blocks.append(b)
        i = j + 1
    return blocks


def terminal_script(body):
    """The commands of a block with "$ " prompts, on the lines where the page has them."""
    out, continued = [], False
    for ln in body:
        if ln.startswith("$ ") or continued:
            cmd = ln[2:] if ln.startswith("$ ") and not continued else ln
            out.append(cmd)
            continued = ln.rstrip().endswith("\\")
        else:
            out.append("")
    return "\n".join(out)


def classify(b):
    first = next((ln for ln in b.body if ln.strip()), "")
    # The first line that is not a shell comment: a block may open with "# what this does".
    first_code = next((ln for ln in b.body if ln.strip() and not ln.startswith("#")), "")
    has_prompt = any(ln.startswith("$ ") for ln in b.body)
    if b.tag in SHELL_TAGS:
        b.kind = "shell"
        b.script = terminal_script(b.body) if has_prompt else "\n".join(b.body)
    elif b.tag == "python":
        if first.startswith(">>>"):
            b.kind = "transcript"
        else:
            b.kind = "python"
            # The heredoc's first line stands on the fence's line, so line numbers still match.
            b.script = (PYTHON + " - <<'SERVESIM_DOC_PYTHON'\n" + "\n".join(b.body) +
                        "\nSERVESIM_DOC_PYTHON")
    elif b.tag == "":
        if b.after_command:
            b.kind = "output"
        elif (first.startswith("servesim ") and not SERVESIM_OUTPUT.match(first)) or \
                first.startswith("$ "):
            b.kind = "shell"
            b.script = terminal_script(b.body) if has_prompt else "\n".join(b.body)
        elif LOOKS_LIKE_COMMAND.match(first_code) and not SERVESIM_OUTPUT.match(first_code):
            # Marked, it is a command block like the others; unmarked, it is an error.
            b.kind = "shell" if b.mark in ("illustrative", "slow", "exit") else "unmarked-command"
            b.script = "\n".join(b.body)
    if b.kind == "shell":
        # The fence's own line is line 1 of the script (the driver's), the body's first is line 2.
        b.script = "\n" + b.script


def bash_driver(state, failed):
    """Run before a block: the page's shell state, strict mode, and a report of a failing line."""
    return (f'source {state} 2>/dev/null; set -e -o pipefail; '
            f'trap \'echo "$LINENO $BASH_COMMAND" > {failed}\' ERR; '
            f'trap \'declare -p > {state}.vars 2>/dev/null; echo "cd $(printf %q "$PWD")" '
            f'> {state}.cwd\' EXIT;')


def save_state(state):
    """The variables and folder the block left, for the next block of the page."""
    try:
        decls = [ln for ln in open(state + ".vars").read().split("\n")
                 if ln.startswith("declare ") and not BASH_OWN.match(ln)
                 and not re.match(r"^declare -\S*r", ln)]
        cwd = open(state + ".cwd").read()
    except OSError:
        return
    with open(state, "w") as f:
        f.write("\n".join(decls) + "\n" + cwd)


def checkout_files():
    """The checkout's files: what git tracks plus untracked files it does not ignore; outside a git
    checkout (CI's fresh copy), every file but .git and build folders (those with a CMakeCache.txt)."""
    try:
        top = subprocess.run(["git", "-C", ROOT, "rev-parse", "--show-toplevel"],
                             capture_output=True, text=True, check=True).stdout.strip()
        if os.path.realpath(top) != os.path.realpath(ROOT):
            raise OSError("not the root of a git checkout")
        return subprocess.run(["git", "-C", ROOT, "ls-files", "-z", "--cached", "--others",
                               "--exclude-standard"], capture_output=True, text=True,
                              check=True).stdout.split("\0")
    except (OSError, subprocess.CalledProcessError):
        files = []
        for d, dirs, names in os.walk(ROOT):
            dirs[:] = [x for x in dirs if x not in (".git", "__pycache__") and
                       not os.path.exists(os.path.join(d, x, "CMakeCache.txt"))]
            files += [os.path.relpath(os.path.join(d, n), ROOT) for n in names]
        return files


def fresh_copy(dest, build_dir):
    for rel in checkout_files():
        src = os.path.join(ROOT, rel)
        if not rel or not os.path.isfile(src) or rel == "build" or rel.startswith("build/"):
            continue
        os.makedirs(os.path.dirname(os.path.join(dest, rel)), exist_ok=True)
        shutil.copy2(src, os.path.join(dest, rel), follow_symlinks=False)
    os.symlink(build_dir, os.path.join(dest, "build"))


def tail(path, n=15):
    try:
        lines = open(path, errors="replace").read().rstrip("\n").split("\n")
    except OSError:
        return []
    return [ln for ln in lines[-n:] if ln != ""] if lines != [""] else []


def run_page(page, blocks, args, bindir):
    """Runs the page's command blocks; returns (failures, seconds)."""
    failures, start = [], time.monotonic()
    work = tempfile.mkdtemp(prefix="servesim-docs-")
    try:
        repo = os.path.join(work, "repo")
        os.makedirs(repo)
        fresh_copy(repo, args.build_dir)
        state = os.path.join(work, "state")
        open(state, "w").write(f"cd {repo}\n")
        env = dict(os.environ, PATH=bindir + os.pathsep + os.environ.get("PATH", ""))
        for n, b in enumerate(blocks):
            if b.kind not in ("shell", "python") or b.mark == "illustrative" or \
               (b.mark == "slow" and not args.slow):
                continue
            failed = os.path.join(work, f"failed-{n}")
            out, err = os.path.join(work, f"out-{n}"), os.path.join(work, f"err-{n}")
            script = bash_driver(state, failed) + b.script
            t0 = time.monotonic()
            with open(out, "w") as fo, open(err, "w") as fe:
                p = subprocess.Popen(["bash", "--noprofile", "--norc", "-c", script], cwd=repo,
                                     env=env, stdout=fo, stderr=fe, stdin=subprocess.DEVNULL,
                                     start_new_session=True)
                try:
                    rc = p.wait(timeout=args.timeout)
                except subprocess.TimeoutExpired:
                    os.killpg(p.pid, signal.SIGKILL)
                    p.wait()
                    rc = None
            dt = time.monotonic() - t0
            save_state(state)
            b.seconds = dt
            if args.verbose:
                print(f"  {page}:{b.line} {'exit ' + str(rc) if rc is not None else 'timeout'} "
                      f"{dt:.1f} s", flush=True)
            if rc == b.expect:
                continue
            where, what = b.line, ""
            if os.path.exists(failed):
                lineno, _, what = open(failed).read().strip().partition(" ")
                if lineno.isdigit() and int(lineno) > 1:
                    where = b.line + int(lineno) - 1
            if rc is None:
                why = f"ran past the time limit ({args.timeout:g} s)"
            elif b.expect:
                why = f"exit {rc}, the page marks it as exiting {b.expect}"
            else:
                why = f"exit {rc}"
            msg = [f"{page}:{where}: {why} (block at line {b.line})"]
            if what:
                first, _, rest = what.partition("\n")
                msg.append(f"  command: {first}" + (" ..." if rest else ""))
            lines = tail(err) or tail(out)
            msg += ["  | " + ln for ln in lines]
            failures.append("\n".join(msg))
    finally:
        if args.keep:
            print(f"  {page}: kept {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)
    return failures, time.monotonic() - start


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("pages", nargs="*")
    ap.add_argument("--slow", action="store_true", help="run the blocks marked slow too")
    ap.add_argument("--list", action="store_true", help="classify the blocks; run nothing")
    ap.add_argument("--timeout", type=float, default=600, help="seconds per block (600)")
    ap.add_argument("--build-dir", default=os.path.join(ROOT, "build"))
    ap.add_argument("--keep", action="store_true", help="keep the temporary folders")
    ap.add_argument("-v", "--verbose", action="store_true", help="each block's exit and time")
    args = ap.parse_args()
    args.build_dir = os.path.abspath(args.build_dir)
    if not os.access(os.path.join(args.build_dir, "servesim"), os.X_OK):
        print(f"run_doc_commands: no servesim binary in {args.build_dir} (build first, or pass "
              "--build-dir)", file=sys.stderr)
        return 2
    pages = args.pages or (["README.md"] + sorted(glob.glob(os.path.join(ROOT, "docs", "*.md"))) +
                           sorted(glob.glob(os.path.join(ROOT, "docs", "howto", "*.md"))))
    pages = [os.path.relpath(os.path.join(ROOT, p), ROOT) for p in pages]
    bindir = tempfile.mkdtemp(prefix="servesim-docs-bin-")
    os.symlink(os.path.join(args.build_dir, "servesim"), os.path.join(bindir, "servesim"))
    all_failures, total = [], {"blocks": 0, "commands": 0, "run": 0, "illustrative": 0,
                               "slow": 0, "seconds": 0.0}
    print(f"{'page':40} {'blocks':>6} {'commands':>8} {'run':>4} {'illustr.':>8} "
          f"{'slow':>4} {'failed':>6} {'seconds':>8}")
    try:
        for page in pages:
            blocks = parse(os.path.join(ROOT, page))
            for b in blocks:
                b.page = page
            problems = []
            for b in blocks:
                if b.mark == "bad":
                    problems.append(f"{page}:{b.line}: a marker this script does not read: "
                                    f"{b.mark_reason} (expected <!-- illustrative|slow|exit N: "
                                    "REASON -->)")
                elif b.mark and not b.mark_reason:
                    problems.append(f"{page}:{b.line}: the marker gives no reason")
                elif b.kind == "unmarked-command":
                    problems.append(f"{page}:{b.line}: an untagged block that reads as a command: "
                                    "tag it ```bash (it then runs) or mark it <!-- illustrative: "
                                    "REASON -->")
            commands = [b for b in blocks if b.kind in ("shell", "python")]
            illustrative = [b for b in commands if b.mark == "illustrative"]
            slow = [b for b in commands if b.mark == "slow" and not args.slow]
            to_run = len(commands) - len(illustrative) - len(slow)
            failures, seconds = ([], 0.0) if args.list or problems or to_run == 0 else \
                run_page(page, blocks, args, bindir)
            failures = problems + failures
            print(f"{page:40} {len(blocks):6} {len(commands):8} {to_run:4} "
                  f"{len(illustrative):8} {len(slow):4} {len(failures):6} {seconds:8.1f}",
                  flush=True)
            for f in failures:
                print(f, flush=True)
            all_failures += failures
            for key, v in (("blocks", len(blocks)), ("commands", len(commands)), ("run", to_run),
                           ("illustrative", len(illustrative)), ("slow", len(slow)),
                           ("seconds", seconds)):
                total[key] += v
    finally:
        shutil.rmtree(bindir, ignore_errors=True)
    print(f"{'total':40} {total['blocks']:6} {total['commands']:8} {total['run']:4} "
          f"{total['illustrative']:8} {total['slow']:4} {len(all_failures):6} "
          f"{total['seconds']:8.1f}")
    if args.list:
        return 1 if all_failures else 0
    print("all command blocks ran" if not all_failures else
          f"{len(all_failures)} block(s) failed or are unclassified", file=sys.stderr)
    return 1 if all_failures else 0


if __name__ == "__main__":
    sys.exit(main())
