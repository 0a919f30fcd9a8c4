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

bash "$(dirname "$0")/apt-install.sh" ensure-chromium "${packages[@]}"
test -x /usr/bin/chromium
echo "ensure-chromium: $(/usr/bin/chromium --version 2>/dev/null || echo chromium installed)"
