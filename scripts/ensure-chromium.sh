#!/usr/bin/env bash
# Make sure Debian's Chromium is installed for the browser tests (Playwright
# drives /usr/bin/chromium; it never downloads a browser of its own), with a
# Japanese font so that screenshots of the Japanese UI show text, not boxes.
# A no-op when both are present. Installing needs root (CI runs as root) or sudo.
set -euo pipefail

JA_FONT_PACKAGE=fonts-ipafont-gothic
JA_FONT_DIR=/usr/share/fonts/opentype/ipafont-gothic

packages=()
[ -x /usr/bin/chromium ] || packages+=(chromium)
[ -d "$JA_FONT_DIR" ] || packages+=("$JA_FONT_PACKAGE")

if [ ${#packages[@]} -eq 0 ]; then
    exit 0
fi

if [ "$(id -u)" -eq 0 ]; then
    SUDO=
elif command -v sudo >/dev/null 2>&1; then
    SUDO=sudo
else
    echo "ensure-chromium: missing ${packages[*]} and not root;" >&2
    echo "  install with: apt-get install -y ${packages[*]}" >&2
    exit 1
fi

echo "ensure-chromium: installing ${packages[*]} from Debian (once per machine)..."
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -q
$SUDO apt-get install -y -q "${packages[@]}"
test -x /usr/bin/chromium
echo "ensure-chromium: $(/usr/bin/chromium --version 2>/dev/null || echo chromium installed)"
