#!/usr/bin/env python3
"""Follow docs/getting-started.md exactly as written, in an empty folder, and report each step.

Usage: scripts/try_getting_started.py REPO_URL [WORKDIR]

Every ```bash block of the page runs, in order, in one shell session that starts in WORKDIR (empty;
a temporary folder by default), with `<the servesim repository URL>` replaced by REPO_URL (a path
works: `git clone` takes one). Two lines cannot run unattended and are mapped as the page itself
says: the interactive `... /usr/bin/python3` reads the ```python block that follows it on stdin,
and the Jupyter server line runs the page's nbconvert alternative on every notebook instead. The
script stops at the first failing block and exits with its status; it prints what each block
printed, so the run can be compared with the page (the capacity answer line in particular).
"""
import pathlib
import re
import subprocess
import sys
import tempfile

PLACEHOLDER = "<the servesim repository URL>"


def blocks(markdown):
    """(language, text) for every fenced block, in order."""
    return [(m.group(1), m.group(2)) for m in
            re.finditer(r"^```(\w*)\n(.*?)^```", markdown, re.S | re.M)]


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    url = sys.argv[1]
    work = pathlib.Path(sys.argv[2] if len(sys.argv) > 2 else tempfile.mkdtemp(prefix="gs."))
    work.mkdir(parents=True, exist_ok=True)
    if any(work.iterdir()):
        sys.exit(f"{work}: not empty; the page starts from an empty folder")
    page = pathlib.Path(__file__).resolve().parent.parent / "docs" / "getting-started.md"
    found = blocks(page.read_text())
    script = ["set -euo pipefail", f"cd {work}"]
    for i, (lang, text) in enumerate(found):
        if lang != "bash":
            continue
        text = text.replace(PLACEHOLDER, url)
        if re.fullmatch(r"\s*PYTHONPATH=build/python /usr/bin/python3\s*", text):
            python = next(t for l, t in found[i + 1:] if l == "python")
            text = f"PYTHONPATH=build/python /usr/bin/python3 - <<'PYEOF'\n{python}PYEOF\n"
        elif "jupyter notebook" in text:
            text = ("(cd notebooks && for nb in *.ipynb; do PYTHONPATH=../build/python "
                    "/usr/bin/python3 -m nbconvert --to notebook --execute --output-dir /tmp \"$nb\"; done)\n")
        script.append(f"echo '=== getting-started block {i + 1}:'; cat <<'SHOWEOF'\n{text}SHOWEOF")
        script.append(text)
    script.append("echo '=== getting-started: every block ran'")
    return subprocess.call(["bash", "-c", "\n".join(script)])


if __name__ == "__main__":
    sys.exit(main())
