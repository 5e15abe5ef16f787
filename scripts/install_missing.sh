# Sourced by scripts/setup.sh and scripts/sanitize.sh: install_missing LABEL PACKAGE... installs,
# with apt-get (as root, or through sudo), those of the Debian packages that dpkg does not list
# as installed, and nothing when all are. LABEL names the caller in the one line it prints.
install_missing() {
  local label=$1
  shift
  local missing=() p
  for p in "$@"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  if [ ${#missing[@]} -gt 0 ]; then
    echo "servesim $label: installing ${missing[*]}" >&2
    local sudo=""
    [ "$(id -u)" -ne 0 ] && sudo="sudo"
    $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}" >/dev/null
  fi
}
