# Sourced by the profile_*_test.sh scripts: sets `py` to the first of python3 on the PATH and
# /usr/bin/python3 that imports PyTorch, or prints why and exits 77 (ctest's skip) naming the
# script that was not exercised. Usage: . torch_python.sh; find_torch_python SCRIPT_NAME
find_torch_python() {
  py=""
  for candidate in python3 /usr/bin/python3; do
    if command -v "$candidate" >/dev/null 2>&1 && "$candidate" -c "import torch" 2>/dev/null; then
      py=$candidate
      return 0
    fi
  done
  echo "SKIPPED: PyTorch is not installed (apt-get install python3-torch, or"
  echo "SERVESIM_WITH_TORCH=1 scripts/setup.sh); scripts/$1 was not exercised."
  exit 77
}
