#!/usr/bin/env bash
# Make sure Debian's HAProxy is installed: `make run-services` puts it in front of
# the two web processes (it starts HAProxy itself, not the package's service).
# A no-op when it is there. Installing needs root or sudo.
set -euo pipefail

if command -v haproxy >/dev/null 2>&1; then
    exit 0
fi
bash "$(dirname "$0")/apt-install.sh" ensure-haproxy haproxy
command -v haproxy >/dev/null
echo "ensure-haproxy: $(haproxy -v | head -n 1)"
