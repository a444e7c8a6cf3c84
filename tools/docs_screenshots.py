"""Screenshots of the documentation site's main pages in headless Chromium, each checked to render.

    python tools/docs_screenshots.py [SITE_DIR] [OUT_DIR]      (make docs-screenshots)

For each page, Chromium loads the built page from disk (no server, no network) and runs its
scripts; the DOM it ends with must have the page's title, the top navigation, a code block coloured
by Pygments and, on pages with diagrams, Mermaid's drawn SVG. A PNG of the page at 1400 px is written
to OUT_DIR and must hold a picture (not a blank page). Exits 1 naming every page that failed.

Needs Debian's ``chromium`` (``apt-get install chromium``).
"""
from __future__ import annotations

import re
import shutil
import struct
import subprocess
import sys
import tempfile
import zlib
from pathlib import Path

FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
         "--disable-extensions", "--no-first-run", "--hide-scrollbars", "--virtual-time-budget=10000"]
WIDTH = 1400

# page directory in the site -> (words its <title> holds, whether it has Python code, diagrams)
PAGES = {
    "": ("icefloe", True, False),
    "getting-started": ("Getting started", True, False),
    "own-session": ("Your own SparkSession", True, True),
    "diagrams": ("How it works", False, True),
    "limitations": ("Limitations and compatibility", False, False),
    "api": ("Python API", True, False),
    "troubleshooting": ("Troubleshooting", False, False),
}


def chromium() -> str | None:
    return shutil.which("chromium") or shutil.which("chromium-browser")


def _run(args: list, timeout: int = 120) -> subprocess.CompletedProcess:
    with tempfile.TemporaryDirectory() as profile:
        return subprocess.run([chromium(), *FLAGS, f"--user-data-dir={profile}", *args],
                              capture_output=True, text=True, timeout=timeout)


def rendered_dom(page: Path) -> str:
    """The page's DOM after its scripts ran."""
    return _run(["--dump-dom", page.as_uri()]).stdout


def problems_in_dom(dom: str, title: str, code: bool, diagrams: bool) -> list[str]:
    found = []
    m = re.search(r"<title>(.*?)</title>", dom, re.S)
    if not m or title not in m.group(1):
        found.append(f"title {m.group(1).strip() if m else None!r} lacks {title!r}")
    if len(re.findall(r'class="md-tabs__link', dom)) < 5:
        found.append("no top navigation (md-tabs)")
    if code and not re.search(r'class="language-python highlight".*?<span class="(k|kn)">', dom, re.S):
        found.append("no code block coloured by Pygments")
    # Material swaps a diagram's <pre class="mermaid"> for a <div class="mermaid"> holding the SVG (in a
    # closed shadow root) only once Mermaid has drawn it: a <pre> left over is a diagram not drawn
    if diagrams and ('<pre class="mermaid"' in dom or '<div class="mermaid"></div>' not in dom):
        found.append("a diagram not drawn by Mermaid")
    return found


def png_pixels_vary(path: Path) -> bool:
    """Whether a PNG holds a picture: its decompressed scanlines take many byte values (a blank
    page takes a handful)."""
    data = path.read_bytes()
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        return False
    pos, idat = 8, b""
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        if kind == b"IDAT":
            idat += data[pos + 8:pos + 8 + length]
        pos += 12 + length
    return len(set(zlib.decompress(idat))) > 64


def screenshot(page: Path, out: Path, height: int = 1200) -> None:
    _run([f"--window-size={WIDTH},{height}", f"--screenshot={out}", page.as_uri()])


def check_site(site: Path, out: Path) -> dict[str, list[str]]:
    """``{page: [problems]}`` for every main page (empty lists: all rendered)."""
    out.mkdir(parents=True, exist_ok=True)
    report = {}
    for name, (title, code, diagrams) in PAGES.items():
        page = site / name / "index.html"
        if not page.exists():
            report[name or "index"] = [f"{page} was not built"]
            continue
        found = problems_in_dom(rendered_dom(page), title, code, diagrams)
        png = out / f"{name or 'index'}.png"
        screenshot(page, png)
        if not png.exists() or not png_pixels_vary(png):
            found.append(f"{png} is missing or blank")
        report[name or "index"] = found
    return report


def main(argv: list[str]) -> int:
    if chromium() is None:
        print("chromium is not installed (Debian: apt-get install chromium)", file=sys.stderr)
        return 1
    site = Path(argv[0] if argv else "site").resolve()
    out = Path(argv[1] if len(argv) > 1 else "site-screenshots").resolve()
    report = check_site(site, out)
    for page, found in report.items():
        print(f"{page}: {'ok' if not found else '; '.join(found)}")
    print(f"screenshots in {out}")
    return 1 if any(report.values()) else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
