"""The PEP 517 build backend of the servesim Python package (pyproject.toml names it).

`pip install .` calls build_wheel(), which builds the CMake target servesim_python (the native
module, the package's .py files and the servesim binary, assembled in BUILD/python/servesim) and
zips it, with the data catalogs the module reads, into a wheel for the interpreter pip runs. The
wheel's console script `servesim` (servesim/_cli.py) runs that binary.

Why a backend of our own, standard library only: pip's index is unreachable here, and the
backends Debian ships (setuptools with wheel, meson-python) import only into Debian's Python; a
venv of another Python (pyenv, conda) has neither `wheel` nor meson-python. With no build
requirements, `pip install .` works offline with or without --no-build-isolation, in any Python.

The CMake build is reused when it was configured for this interpreter's base Python (a venv of
/usr/bin/python3 reuses build/, which scripts/setup.sh configures): then nothing is compiled that
the build has not already compiled. Another Python gets its own build folder, build-pip-<hash>.
  SERVESIM_BUILD_DIR  the CMake build folder to reuse (default: build)
"""

import base64
import csv
import hashlib
import io
import os
import re
import shutil
import stat
import subprocess
import sys
import sysconfig
import zipfile

_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
_NAME = "servesim"

# The folders under the data root that the module reads (data_dir() in sim/base): catalogs,
# calibrations, kernel profiles and the shipped datasets. The installed package points
# SERVESIM_DATA_DIR at its copy (servesim/__init__.py), so it does not need the checkout.
_DATA_FOLDERS = ("models/catalog", "hardware/catalog", "hardware/calibration", "hardware/kernels",
                 "data")


def _version():
    with open(os.path.join(_ROOT, "CMakeLists.txt"), encoding="utf-8") as f:
        m = re.search(r"project\(servesim VERSION ([0-9.]+)", f.read())
    if not m:
        raise RuntimeError("servesim build: no 'project(servesim VERSION x.y)' in CMakeLists.txt")
    return m.group(1)


def _base_python():
    # A venv's interpreter is a link to its base; the headers and ABI are the base's.
    return os.path.realpath(getattr(sys, "_base_executable", None) or sys.executable)


def _cached_python(build_dir):
    cache = os.path.join(build_dir, "CMakeCache.txt")
    if not os.path.isfile(cache):
        return None
    with open(cache, encoding="utf-8") as f:
        for line in f:
            if line.startswith("Python_EXECUTABLE:"):
                return os.path.realpath(line.split("=", 1)[1].strip())
    return None


def _run(cmd):
    print("servesim build: " + " ".join(cmd), file=sys.stderr, flush=True)
    # CCACHE_BASEDIR=/: a second build folder reuses the first one's objects (README, CI).
    env = dict(os.environ, CCACHE_BASEDIR=os.environ.get("CCACHE_BASEDIR", "/"))
    subprocess.run(cmd, check=True, stdout=sys.stderr, env=env)


def _cmake_build():
    """Builds servesim_python; returns the folder holding the assembled package."""
    build = os.path.normpath(os.path.join(_ROOT, os.environ.get("SERVESIM_BUILD_DIR", "build")))
    python = _base_python()
    if _cached_python(build) != python:
        tag = hashlib.sha256(python.encode()).hexdigest()[:8]
        # Beside the build folder, at its depth: ccache (CCACHE_BASEDIR=/) then finds its objects.
        build = os.path.join(os.path.dirname(build), "build-pip-" + tag)
        if _cached_python(build) != python:
            cmd = ["cmake", "-S", _ROOT, "-B", build, "-DCMAKE_BUILD_TYPE=Release",
                   "-DPython_EXECUTABLE=" + python, "-DSERVESIM_BUILD_TESTS=OFF",
                   "-DSERVESIM_BUILD_BENCH=OFF"]
            if shutil.which("ninja"):
                cmd += ["-G", "Ninja"]
            if shutil.which("ccache"):
                cmd.append("-DCMAKE_CXX_COMPILER_LAUNCHER=ccache")
            _run(cmd)
    _run(["cmake", "--build", build, "--target", "servesim_python", "-j", str(os.cpu_count() or 1)])
    package = os.path.join(build, "python", _NAME)
    if not any(f.startswith("_core") for f in os.listdir(package)):
        raise RuntimeError("servesim build: " + build + " has no native module "
                           "(pybind11-dev and python3-dev missing? scripts/setup.sh installs them)")
    return package


def _tag():
    impl = "cp" if sys.implementation.name == "cpython" else sys.implementation.name[:2]
    py = "%s%d%d" % (impl, sys.version_info[0], sys.version_info[1])
    platform = re.sub(r"[-.]", "_", sysconfig.get_platform())
    return "%s-%s-%s" % (py, py, platform)


def _metadata(version):
    return ("Metadata-Version: 2.1\n"
            "Name: %s\n"
            "Version: %s\n"
            "Summary: A discrete-event simulator of vLLM serving for capacity planning\n"
            "Requires-Python: >=3.8\n"
            # numpy only for SimulationResult.requests (results.py names it when missing), so an
            # offline install into an environment without numpy works.
            "Provides-Extra: arrays\n"
            "Requires-Dist: numpy; extra == \"arrays\"\n"
            "Provides-Extra: dataframe\n"
            "Requires-Dist: pandas; extra == \"dataframe\"\n"
            "Provides-Extra: plot\n"
            "Requires-Dist: matplotlib; extra == \"plot\"\n" % (_NAME, version))


class _Wheel:
    """A wheel being written: each file's hash goes to RECORD (the wheel format's manifest)."""

    def __init__(self, path):
        self.zip = zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED)
        self.record = []

    def add(self, arcname, data, mode=0o644):
        info = zipfile.ZipInfo(arcname, date_time=(1980, 1, 1, 0, 0, 0))
        # A regular file's type bits with its mode: pip keeps the executable bit of bin/servesim
        # only for entries marked as regular files.
        info.external_attr = (stat.S_IFREG | mode) << 16
        info.compress_type = zipfile.ZIP_DEFLATED
        self.zip.writestr(info, data)
        digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
        self.record.append((arcname, "sha256=" + digest, str(len(data))))

    def add_file(self, arcname, path, mode=0o644):
        with open(path, "rb") as f:
            self.add(arcname, f.read(), mode)

    def close(self, record_name):
        out = io.StringIO()
        writer = csv.writer(out, lineterminator="\n")
        writer.writerows(self.record)
        writer.writerow((record_name, "", ""))
        self.zip.writestr(zipfile.ZipInfo(record_name, date_time=(1980, 1, 1, 0, 0, 0)),
                          out.getvalue())
        self.zip.close()


def get_requires_for_build_wheel(config_settings=None):
    return []


def prepare_metadata_for_build_wheel(metadata_directory, config_settings=None):
    # pip resolves the dependencies from this before it builds (a missing numpy is named at once).
    dist_info = "%s-%s.dist-info" % (_NAME, _version())
    os.makedirs(os.path.join(metadata_directory, dist_info), exist_ok=True)
    with open(os.path.join(metadata_directory, dist_info, "METADATA"), "w", encoding="utf-8") as f:
        f.write(_metadata(_version()))
    return dist_info


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    version = _version()
    package = _cmake_build()
    name = "%s-%s-%s.whl" % (_NAME, version, _tag())
    dist_info = "%s-%s.dist-info" % (_NAME, version)
    wheel = _Wheel(os.path.join(wheel_directory, name))
    for f in sorted(os.listdir(package)):
        path = os.path.join(package, f)
        if os.path.isfile(path) and (f.endswith(".py") or f.startswith("_core")):
            wheel.add_file(_NAME + "/" + f, path)
    binary = os.path.join(package, "bin", _NAME)
    if not os.access(binary, os.X_OK):
        raise RuntimeError("servesim build: " + binary + " is missing (the servesim_python target "
                           "copies the servesim binary there)")
    wheel.add_file(_NAME + "/bin/" + _NAME, binary, 0o755)
    for folder in _DATA_FOLDERS:
        for dirpath, dirnames, filenames in os.walk(os.path.join(_ROOT, folder)):
            dirnames.sort()
            for f in sorted(filenames):
                path = os.path.join(dirpath, f)
                rel = os.path.relpath(path, _ROOT).replace(os.sep, "/")
                wheel.add_file("%s/data/%s" % (_NAME, rel), path)
    wheel.add(dist_info + "/METADATA", _metadata(version).encode())
    wheel.add(dist_info + "/entry_points.txt",
              ("[console_scripts]\n%s = %s._cli:main\n" % (_NAME, _NAME)).encode())
    wheel.add(dist_info + "/WHEEL", ("Wheel-Version: 1.0\nGenerator: servesim_wheel\n"
                                     "Root-Is-Purelib: false\nTag: %s\n" % _tag()).encode())
    wheel.close(dist_info + "/RECORD")
    return name
