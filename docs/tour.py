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
ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]


def _hub_and_review(page, base: str) -> None:  # a Playwright page
    """The study hub, its recruitment box, and the review page with a flagged and an approved
    submission (the demo's simulated crowd: seed_demo flags the careless ones on submit)."""
    page.set_viewport_size({"width": 1280, "height": 1400})
    page.goto(f"{base}/crowd/studies/demo/")
    page.screenshot(path=OUT / "tour-hub.png", full_page=False)
    page.set_viewport_size({"width": 1280, "height": 860})
    page.locator("#recruitment").screenshot(path=OUT / "tour-recruitment.png")
    # Most flags first: pending flagged work on top, then flagged work already approved; the
    # first approved entry is opened to show its answers beside the pairs.
    page.goto(f"{base}/crowd/studies/demo/review/?state=all&sort=flags")
    approved = page.locator("article.review-approved").first
    approved.locator("details.answers").evaluate("d => d.open = true")
    tasks = approved.locator("li.task-review")
    last = tasks.nth(min(1, tasks.count() - 1)).bounding_box()
    bottom = last["y"] + last["height"] + 12 + page.evaluate("() => window.scrollY")
    page.screenshot(
        path=OUT / "tour-review.png", full_page=True, clip={"x": 0, "y": 0, "width": 1280, "height": bottom}
    )


def _rewrites(page, base: str) -> None:  # a Playwright page
    """The sentiment rewrites of the demo, reviewable beside their originals: the first one."""
    page.set_viewport_size({"width": 1280, "height": 860})
    page.goto(f"{base}/judging/rewrites/demo/")
    page.locator("article.rewrite").first.screenshot(path=OUT / "tour-rewrites.png")


def _battery(page) -> None:  # a Playwright page on the report
    """The bias battery's plot: biases by subject, with intervals (its table is 30 columns wide:
    the README names it rather than shows it)."""
    page.locator("figure[data-figure=battery]").screenshot(path=OUT / "tour-battery.png")


def _current_report(page) -> None:  # a Playwright page on the report
    """Compute the report if there is none, recompute it if it is stale (seed_demo computes
    one before the worker has run the judge jobs), and wait until it is shown."""
    button = page.locator("#report-body button", has_text="ompute")
    if button.count() and (page.locator("#stale-warning").count() or not page.locator(".figures img").count()):
        button.first.click()
    # The page polls while the worker computes (#run-status); it is done when current.
    page.wait_for_function(
        "() => !document.querySelector('#run-status, #stale-warning') && !!document.querySelector('.figures img')",
        timeout=300_000,
    )
    page.wait_for_timeout(1500)


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
        # First the report, so the dashboard's leaderboard already includes the judge jobs.
        page.goto(f"{base}/studies/demo/report/")
        _current_report(page)
        page.goto(f"{base}/dashboard/")
        page.screenshot(path=OUT / "tour-dashboard.png", full_page=True)
        page.goto(f"{base}/judging/jobs/1/")
        page.screenshot(path=OUT / "tour-judge-job.png", full_page=True)
        # Crowd progress: the hub's per-batch table, folded when a study has many batches.
        page.goto(f"{base}/crowd/studies/demo/")
        page.evaluate("document.querySelector('#batches details.progress-details').open = true")
        page.locator("#batches").evaluate("e => e.scrollIntoView()")
        page.screenshot(path=OUT / "tour-crowd-study.png", full_page=False)
        _hub_and_review(page, base)
        page.goto(f"{base}/studies/demo/report/")
        page.wait_for_selector(".figures img", timeout=60_000)
        page.wait_for_timeout(1500)
        # The first picture of the README: the verdict cards, the answer at a glance. A phone
        # sees the headlines as they open (folded); the wide shot opens each card's findings
        # (the numbers table under them stays folded).
        page.set_viewport_size({"width": 390, "height": 844})
        page.locator("#summary").screenshot(path=OUT / "tour-phone.png")
        page.set_viewport_size({"width": 1280, "height": 860})
        page.evaluate("document.querySelectorAll('#summary details.summary-findings').forEach(d => d.open = true)")
        # Claims lead each list; a card holds a line per bias and condition, so the picture is
        # cut after the first findings (as a reader scrolls them) instead of running 3,000 px.
        box = page.locator("#summary").bounding_box()
        top = box["y"] + page.evaluate("() => window.scrollY")
        page.screenshot(
            path=OUT / "tour-summary.png",
            full_page=True,
            clip={"x": box["x"], "y": top, "width": box["width"], "height": min(box["height"], 1150)},
        )
        page.locator(".figures").screenshot(path=OUT / "tour-report.png")
        _battery(page)
        # The whole table, not its scroll box: widen the page's column for this one picture.
        page.set_viewport_size({"width": 1750, "height": 860})
        page.evaluate(
            "document.querySelectorAll('main, #leaderboard .table-wrap').forEach(e => e.style.maxWidth = 'none')"
        )
        page.locator("#leaderboard").screenshot(path=OUT / "tour-leaderboard.png")
        _rewrites(page, base)
        browser.close()


if __name__ == "__main__":
    main()
