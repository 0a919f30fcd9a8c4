"""Draw the web app manifest's PNG icons from static/favicon.svg (run by hand, output committed).

``python scripts/make_icons.py``: Chromium (Playwright) renders the SVG at 192 and 512 px,
and a maskable 512 px version with the tile inside the safe zone on the same green.
"""

from __future__ import annotations

from pathlib import Path

from playwright.sync_api import sync_playwright

ROOT = Path(__file__).resolve().parents[1]
SVG = (
    (ROOT / "static" / "favicon.svg")
    .read_text()
    .replace("<svg ", '<svg width="100%" height="100%" ')
)
OUT = ROOT / "static" / "icons"


def main() -> None:
    OUT.mkdir(exist_ok=True)
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path="/usr/bin/chromium")
        for size, maskable in ((192, False), (512, False), (512, True)):
            page = browser.new_page(viewport={"width": size, "height": size})
            pad = size * 0.1 if maskable else 0  # the maskable safe zone: 80 % in the middle
            page.set_content(
                f'<body style="margin:0;background:#123a30">'
                f'<div style="padding:{pad}px;width:{size - 2 * pad}px;height:{size - 2 * pad}px">'
                f"{SVG}</div></body>"
            )
            name = f"icon-{size}{'-maskable' if maskable else ''}.png"
            page.screenshot(path=str(OUT / name), omit_background=not maskable)
            page.close()
        browser.close()


if __name__ == "__main__":
    main()
