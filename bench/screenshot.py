"""Screenshot a dashboard in headless chromium (how docs/dashboard.png is made).

    evaldsl run suites/baseline --agent evaldsl.demo:agent --json /tmp/b.json
    evaldsl report /tmp/b.json -o /tmp/b.html
    python bench/screenshot.py /tmp/b.html docs/dashboard.png --open "searches then emails"

``--open NAME`` opens that case's expander first; the shot is the top of the
page at the given viewport (not the full page, to keep the PNG small).
"""

from __future__ import annotations

import argparse
import shutil
import sys
from pathlib import Path

ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
        "--disable-component-update", "--disable-sync", "--no-first-run"]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("html", type=Path)
    parser.add_argument("png", type=Path)
    parser.add_argument("--open", metavar="CASE", action="append", default=[], help="open this case's expander")
    parser.add_argument("--width", type=int, default=1200)
    parser.add_argument("--height", type=int, default=1100)
    args = parser.parse_args()
    chromium = shutil.which("chromium")
    if chromium is None:
        print("chromium is not installed (apt-get install chromium)", file=sys.stderr)
        return 1
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=chromium, args=ARGS)
        page = browser.new_page(viewport={"width": args.width, "height": args.height})
        page.goto(args.html.resolve().as_uri())
        for name in args.open:
            page.locator("button.case", has_text=name).first.click()
        page.screenshot(path=str(args.png))
        browser.close()
    print(f"{args.png}: {args.png.stat().st_size / 1000:.0f} kB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
