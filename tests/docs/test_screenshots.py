"""The main pages render in a real browser (headless Chromium): title, top navigation, code
coloured at build time, diagrams drawn by the site's own Mermaid, a picture that is not blank.
Marked ``browser`` (``pytest -m browser``, or ``make docs-screenshots``): it needs Debian's chromium."""
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "tools"))
import docs_screenshots  # noqa: E402

pytestmark = pytest.mark.browser


@pytest.mark.skipif(docs_screenshots.chromium() is None, reason="chromium is not installed")
def test_main_pages_render(built_site, tmp_path):
    site, _ = built_site
    report = docs_screenshots.check_site(site, tmp_path / "shots")
    assert set(report) == {name or "index" for name in docs_screenshots.PAGES}
    assert {page: found for page, found in report.items() if found} == {}
    assert all((tmp_path / "shots" / f"{page}.png").stat().st_size > 20_000 for page in report)


def test_a_blank_page_is_not_a_picture(tmp_path):
    import struct
    import zlib

    width, height = 64, 16
    raw = b"".join(b"\x00" + b"\xff" * (3 * width) for _ in range(height))
    chunk = lambda kind, data: (struct.pack(">I", len(data)) + kind + data          # noqa: E731
                                + struct.pack(">I", zlib.crc32(kind + data)))
    png = (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0))
           + chunk(b"IDAT", zlib.compress(raw)) + chunk(b"IEND", b""))
    (tmp_path / "blank.png").write_bytes(png)
    assert not docs_screenshots.png_pixels_vary(tmp_path / "blank.png")
