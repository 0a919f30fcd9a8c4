#!/usr/bin/env bash
# Make sure Debian's HAProxy is installed: `make run-services` puts it in front of
# the two web processes. A no-op when it is there. Installing needs root or sudo.
set -euo pipefail

if command -v haproxy >/dev/null 2>&1; then
    exit 0
fi
if [ "$(id -u)" -eq 0 ]; then
    SUDO=
elif command -v sudo >/dev/null 2>&1; then
    SUDO=sudo
else
    echo "ensure-haproxy: haproxy is missing and this is not root;" >&2
    echo "  install it with: apt-get install -y haproxy" >&2
    exit 1
fi
echo "ensure-haproxy: installing haproxy from Debian (once per machine)..."
export DEBIAN_FRONTEND=noninteractive
# The package's own service is not wanted: make run-services starts HAProxy itself.
$SUDO apt-get update -q
$SUDO apt-get install -y -q haproxy
command -v haproxy >/dev/null
echo "ensure-haproxy: $(haproxy -v | head -n 1)"
