#!/usr/bin/env bash
# Install Debian packages, once per machine: `scripts/apt-install.sh WHO PACKAGE...`
# (WHO names the caller in messages). Needs root (CI runs as root) or sudo; without
# either it says what to install and fails.
set -euo pipefail

who=$1
shift
if [ "$(id -u)" -eq 0 ]; then
    SUDO=
elif command -v sudo >/dev/null 2>&1; then
    SUDO=sudo
else
    echo "$who: missing $* and not root;" >&2
    echo "  install with: apt-get install -y $*" >&2
    exit 1
fi
echo "$who: installing $* from Debian (once per machine)..."
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -q
$SUDO apt-get install -y -q "$@"
