"""Screenshots for the README tour, taken from a running `make run` (http://127.0.0.1:8000).

Run: .venv/bin/python docs/tour.py [--base http://127.0.0.1:8000]
Uses Debian's Chromium through Playwright (never a downloaded browser) and the local demo
login (researcher / researcher, DEBUG only). Writes docs/screenshots/tour-*.png.
"""
from __future__ import annotations

import argparse
from pathlib import Path

from playwright.sync_api import sync_playwright

OUT = Path(__file__).resolve().parent / "screenshots"
ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking",
        "--disable-component-update", "--disable-sync", "--no-first-run"]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--base", default="http://127.0.0.1:8000")
    base = parser.parse_args().base
    OUT.mkdir(exist_ok=True)
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path="/usr/bin/chromium", headless=True, args=ARGS)
        page = browser.new_page(viewport={"width": 1280, "height": 860})
        page.goto(f"{base}/accounts/login/")
        page.fill("input[name=username]", "researcher")
        page.fill("input[name=password]", "researcher")
        page.click("button[type=submit]")
        page.goto(f"{base}/dashboard/")
        page.screenshot(path=OUT / "tour-dashboard.png", full_page=True)
        page.goto(f"{base}/judging/jobs/1/")
        page.screenshot(path=OUT / "tour-judge-job.png", full_page=True)
        page.goto(f"{base}/crowd/studies/demo/")
        page.screenshot(path=OUT / "tour-crowd-study.png", full_page=False)
        page.goto(f"{base}/studies/demo/report/")
        button = page.locator("button", has_text="ompute")
        if button.count():
            button.first.click()
        page.wait_for_selector(".figures img, .figures svg", timeout=120_000)
        page.wait_for_timeout(1500)
        page.locator(".figures").screenshot(path=OUT / "tour-report.png")
        browser.close()


if __name__ == "__main__":
    main()
