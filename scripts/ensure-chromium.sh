#!/usr/bin/env bash
# Make sure Debian's Chromium is installed for the browser tests (Playwright
# drives /usr/bin/chromium; it never downloads a browser of its own).
# A no-op when /usr/bin/chromium exists. Installing needs root (CI runs as root).
set -euo pipefail

if [ -x /usr/bin/chromium ]; then
    exit 0
fi

if [ "$(id -u)" -ne 0 ]; then
    if command -v sudo >/dev/null 2>&1; then
        SUDO=sudo
    else
        echo "ensure-chromium: /usr/bin/chromium is missing and we are not root;" >&2
        echo "  install it with: apt-get install -y chromium" >&2
        exit 1
    fi
else
    SUDO=
fi

echo "ensure-chromium: installing Debian's chromium (once per machine)..."
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -q
$SUDO apt-get install -y -q chromium
test -x /usr/bin/chromium
echo "ensure-chromium: $(/usr/bin/chromium --version 2>/dev/null || echo installed)"
