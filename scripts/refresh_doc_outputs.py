#!/usr/bin/env python3
"""Re-runs every `servesim ...` command block in a Markdown page and replaces the output block that
follows it with the command's real output, so pages that show outputs stay true after a change of
the model or the catalogs.

A command block is a fenced block whose first line starts with "servesim "; its output block is the
fenced block right after it (blank lines between allowed). A line "stderr: `...`" right after the
output block, if present, is replaced by the command's last stderr line. Commands run in a
temporary folder with SOURCE_DATE_EPOCH=0, with the build's binary, and R / S / V set as the docs
use them.

Usage: scripts/refresh_doc_outputs.py docs/capacity-planning.md [more pages]
"""
import os
import re
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BIN = os.path.join(ROOT, "build", "servesim")
FENCE = re.compile(r"^```[a-z]*\n(.*?)^```\n", re.S | re.M)


def run(command, workdir):
    cmd = command.replace("\\\n", " ").strip()
    cmd = BIN + cmd[len("servesim"):]
    env = dict(os.environ, SOURCE_DATE_EPOCH="0",
               R=os.path.join(ROOT, "data", "realdata"),
               S=os.path.join(ROOT, "tests", "data", "realdata_sidecars"))
    p = subprocess.run(["bash", "-c", cmd], cwd=workdir, env=env, capture_output=True, text=True)
    return p.stdout, p.stderr.strip().splitlines()[-1:] if p.stderr.strip() else []


def refresh(path):
    text = open(path).read()
    out, pos, changed = [], 0, 0
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
                tail = re.match(r"stderr: `[^`]*`\n", text[pos:])
                if tail and stderr:
                    out.append("stderr: `" + stderr[0].replace("`", "'") + "`\n")
                    pos += tail.end()
                changed += 1
                i += 2
                continue
            i += 1
    out.append(text[pos:])
    open(path, "w").write("".join(out))
    print(f"{path}: {changed} command outputs refreshed")


if __name__ == "__main__":
    for page in sys.argv[1:]:
        refresh(page)
