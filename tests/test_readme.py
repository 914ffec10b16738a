"""The README's Python API example runs as written, on a real page of the shared data or hand-written pages."""

from __future__ import annotations

import contextlib
import io
import re
from pathlib import Path

from warc_builder import article_page, paragraph

ROOT = Path(__file__).resolve().parents[1]
MSV = Path.home() / ".cache" / "newsclean-data" / "msv-big9"


def readme_example() -> str:
    """The first ```python block of the README's "Python API" section."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    section = text[text.index("## Python API"):]
    section = section[: section.index("\n## ", 1)]
    return re.search(r"```python\n(.*?)```", section, re.S).group(1)


def _hand_written_site(folder: Path) -> tuple[bytes, str]:
    """Five pages of one site (shared navigation, footer, related links); the first page and its article text."""
    folder.mkdir()
    texts = []
    for n in range(5):
        paragraphs = [paragraph(10 * n + k) for k in range(4)]
        html = article_page("courier", "world", f"Story number {n}", paragraphs)
        (folder / f"{n}.html").write_text(html, encoding="utf-8")
        texts.append(" ".join(paragraphs))
    return (folder / "0.html").read_bytes(), texts[0]


def _run(tmp_path: Path, monkeypatch) -> str:
    monkeypatch.chdir(tmp_path)
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(readme_example(), "README.md", "exec"), {"__name__": "readme_example"})  # noqa: S102
    return out.getvalue()


def test_readme_example_on_hand_written_pages(tmp_path, monkeypatch):
    page, article_text = _hand_written_site(tmp_path / "site-pages")
    (tmp_path / "page.html").write_bytes(page)
    lines = _run(tmp_path, monkeypatch).splitlines()
    assert lines[0].startswith("Story number 0")  # the page's own headline
    stats = next(k for k, line in enumerate(lines) if re.match(r"\d+ en ", line))  # word count, language, date
    printed_text = " ".join(lines[1:stats])  # article.text[:200]
    assert printed_text.startswith("Story number 0") and article_text[:60] in printed_text
    per_page = [line for line in lines if line.endswith("static-noise nodes removed")]
    assert len(per_page) == 5
    # navigation, share bar and footer repeat on all five pages: every page loses them as static noise
    assert all(int(line.split(";")[1].split()[0]) >= 3 for line in per_page)
    assert "Copyright" not in printed_text and "Politics" not in printed_text


def test_readme_example_on_a_real_page(tmp_path, monkeypatch):
    import pytest

    html = sorted((MSV / "big5-13" / "html").glob("*.htm*")) if (MSV / "big5-13" / "html").is_dir() else []
    if not html:
        pytest.skip(f"shared data not unpacked at {MSV} (../shared/data/unpack.sh)")
    gold = MSV / "big5-13" / "gold" / (html[0].stem + ".txt")
    (tmp_path / "page.html").write_bytes(html[0].read_bytes())
    (tmp_path / "site-pages").mkdir()
    for path in html[:5]:
        (tmp_path / "site-pages" / f"{path.stem.replace(' ', '_')}.html").write_bytes(path.read_bytes())
    lines = _run(tmp_path, monkeypatch).splitlines()
    printed_text = lines[1]
    gold_words = set(re.findall(r"\w+", gold.read_text(encoding="utf-8", errors="replace").lower()))
    words = re.findall(r"\w+", printed_text.lower())
    assert words and sum(w in gold_words for w in words) / len(words) >= 0.8  # the start of the article, not a menu
    assert len([line for line in lines if "words;" in line or "rejected:" in line]) == 5
