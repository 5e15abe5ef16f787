#!/usr/bin/env bash
# The C++ sources' formatting against .clang-format (clang-format 14, Debian's clang-format).
#   scripts/check_format.sh [FILE ...]         lists the files whose formatting differs; exit 1 if any
#   scripts/check_format.sh --fix [FILE ...]   rewrites them in place
#   scripts/check_format.sh --diff [FILE ...]  shows the changes --fix would make
# Without FILEs: every C++ file git tracks (*.cpp, *.h); outside git, every one but the build folders'.
set -euo pipefail
cd "$(dirname "$0")/.."

mode=check
case "${1:-}" in
  --fix) mode=fix; shift ;;
  --diff) mode=diff; shift ;;
  -h|--help) sed -n '2,6p' "$0"; exit 0 ;;
esac

cf=$(command -v clang-format-14 || command -v clang-format || true)
if [ -z "$cf" ]; then
  echo "check_format.sh: clang-format is not installed (apt-get install clang-format)" >&2
  exit 2
fi

if [ $# -gt 0 ]; then
  files=("$@")
else
  if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
    mapfile -t files < <(git ls-files '*.cpp' '*.h')
  else  # a copy without .git (CI's fresh copy): the same files, build folders aside
    mapfile -t files < <(find . \( -path './build*' -o -path './.git' -o -path './node_modules' \) \
                           -prune -o -type f \( -name '*.cpp' -o -name '*.h' \) -print |
                         sed 's|^\./||' | sort)
  fi
fi

differ=0
for f in "${files[@]}"; do
  if ! "$cf" --style=file "$f" | cmp -s - "$f"; then
    differ=$((differ + 1))
    case $mode in
      check) echo "$f" ;;
      diff) "$cf" --style=file "$f" | diff -u --label "$f" --label "$f (formatted)" "$f" - || true ;;
      fix) "$cf" --style=file -i "$f"; echo "formatted $f" ;;
    esac
  fi
done

if [ "$mode" = check ] && [ "$differ" -gt 0 ]; then
  echo "check_format.sh: $differ of ${#files[@]} files differ from .clang-format" \
       "(scripts/check_format.sh --diff shows how; --fix rewrites them)" >&2
  exit 1
fi
[ "$mode" = fix ] || echo "check_format.sh: ${#files[@]} files checked, $differ differ" >&2
