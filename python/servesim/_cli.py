"""The ``servesim`` command of an installed package (pip's console script, and ``python -m
servesim``): runs the servesim binary the package carries, with the package's data catalogs.

The binary is executed (os.execve), not run in process through servesim._core, so that the
command behaves exactly as build/servesim does: output streams as it is written, Ctrl-C and
SIGTERM reach it, `servesim serve` keeps serving, and its exit code is the command's.
"""

import os
import sys

_HERE = os.path.dirname(os.path.abspath(__file__))
BINARY = os.path.join(_HERE, "bin", "servesim")


def main():
    if not os.access(BINARY, os.X_OK):
        sys.stderr.write("servesim: error: this servesim package carries no executable binary at "
                         f"{BINARY} (the build assembles it in build/python/servesim/bin; "
                         "`pip install .` from the checkout installs it)\n")
        return 2
    env = dict(os.environ)
    packaged_data = os.path.join(_HERE, "data")
    if os.path.isdir(packaged_data):  # an installed package: its own catalogs (see __init__.py)
        env.setdefault("SERVESIM_DATA_DIR", packaged_data)
    os.execve(BINARY, [BINARY] + sys.argv[1:], env)
    return 1  # not reached: execve replaces this process or raises OSError


if __name__ == "__main__":
    sys.exit(main())
