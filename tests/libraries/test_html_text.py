"""HTML → text for library pages (stdlib html.parser)."""
from __future__ import annotations

from probe_core.libraries.html_text import html_to_text


def test_drops_scripts_and_styles_keeps_structure():
    page = """<!doctype html><html><head><title>Ignored title</title><style>.x{color:red}</style>
    <script>track("visit")</script></head><body>
    <nav>Home</nav><h1>Connection pools</h1><p>A pool keeps
       connections   open &amp; reuses them.</p>
    <h2>Sizing</h2><ul><li>min_size</li><li>max <b>size</b></li></ul>
    <pre>pool = Pool(
    size=4)</pre><p>Line one<br>Line two</p><table><tr><th>k</th><td>v</td></tr></table>
    </body></html>"""
    assert html_to_text(page) == (
        "Home\n\n# Connection pools\n\nA pool keeps connections open & reuses them.\n\n## Sizing\n\n"
        "- min_size\n- max size\n\npool = Pool(\n    size=4)\n\nLine one\nLine two\n\nk | v\n")


def test_title_becomes_the_heading_when_the_body_has_none():
    assert html_to_text("<title>Release notes</title><p>Fixed the leak.</p>") == "# Release notes\n\nFixed the leak.\n"


def test_empty_and_broken_markup():
    assert html_to_text("") == ""
    assert html_to_text("<script>x</script>") == ""
    assert html_to_text("<p>unclosed <b>bold") == "unclosed bold\n"
