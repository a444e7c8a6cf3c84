"""The built site stands alone and reads well: no script, style or font from another host, code
coloured at build time, the pinned Mermaid file intact, Troubleshooting by heading."""
import hashlib
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
ASSETS = ROOT / "docs" / "assets" / "javascripts"


def test_mermaid_is_the_pinned_file():
    expected, name = (ASSETS / "mermaid.min.js.sha256").read_text().split()
    assert hashlib.sha256((ASSETS / name).read_bytes()).hexdigest() == expected


def test_every_asset_is_served_by_the_site(built_site):
    site, _ = built_site
    remote = re.compile(r'<(?:script|link|img)\b[^>]*\b(?:src|href)="(?:https?:)?//[^"]*"')
    for page in site.rglob("*.html"):
        found = remote.findall(page.read_text())
        assert not found, (page, found)
    assert not any("fonts.googleapis" in p.read_text() for p in site.rglob("*.html"))


def test_code_is_highlighted_at_build_time(built_site):
    site, _ = built_site
    html = (site / "getting-started" / "index.html").read_text()
    assert 'class="language-python highlight"' in html
    assert '<span class="kn">import</span>' in html          # Pygments' token classes, no script needed


def test_troubleshooting_has_a_heading_per_case(built_site):
    site, _ = built_site
    html = (site / "troubleshooting" / "index.html").read_text()
    for anchor in ("java-is-missing", "a-spark-version-clash", "sparksql-does-not-find-an-icefloe-table",
                   "an-s3-403", "a-worker-without-icefloe-installed"):
        assert f'id="{anchor}"' in html, anchor
