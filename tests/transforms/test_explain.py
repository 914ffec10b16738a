"""newsclean explain: each stage's removals labelled over the page's own text."""

import lxml.html
from test_chain import PAGES

from newsclean.cli import main
from newsclean.transforms.chain import DEFAULT_CONFIG, HEURISTIC_CONFIG, extract_article
from newsclean.transforms.explain import LABELS, explain_page
from newsclean.transforms.site_evidence import learn_site_evidence
from newsclean.transforms.text import count_words


def labelled(report_html: str) -> dict[str, str]:
    doc = lxml.html.document_fromstring(report_html)
    out: dict[str, str] = {}
    for span in doc.find_class("nc-page")[0].iter("span"):
        label = span.get("class", "").removeprefix("nc-")
        out[label] = out.get(label, "") + " " + (span.text or "")
    return out


def test_each_stage_is_labelled_on_the_page_text():
    signature = learn_site_evidence([html for html, _ in PAGES[1:]])
    report = explain_page(PAGES[0][0], signature, HEURISTIC_CONFIG)
    spans = labelled(report.html)
    assert "Home" in spans["static"] and "Copyright 2013" in spans["static"]
    assert "Another headline 0 1" in spans["dynamic"]
    assert "council had voted to approve the new budget" in spans["kept"]
    assert "council had voted" not in spans.get("static", "") + spans.get("dynamic", "")
    assert report.words["kept"] > 50 and set(report.words) == set(LABELS)


def test_report_is_self_contained_and_inert():
    report = explain_page(PAGES[0][0], None, DEFAULT_CONFIG)
    assert "<script" not in report.html and "href=" not in report.html
    assert "tracking" not in report.html  # script text is not shown as page text
    assert "council had voted" in labelled(report.html)["kept"]


def test_hidden_text_is_labelled_hidden_in_the_default_chain():
    page = PAGES[0][0].replace("<body>", "<body><div style='display:none'>Subscribe to our newsletter today</div>", 1)
    assert page != PAGES[0][0]
    report = explain_page(page, None, DEFAULT_CONFIG)
    assert "Subscribe to our newsletter" in labelled(report.html)["hidden"]
    assert report.words["hidden"] == 5
    paper = labelled(explain_page(page, None, HEURISTIC_CONFIG).html)  # reads all text, as the papers do
    assert "Subscribe to our newsletter" not in paper.get("hidden", "")


def test_cli_writes_the_report(tmp_path, capsys):
    page = tmp_path / "page.html"
    page.write_text(PAGES[0][0], encoding="utf-8")
    neighbours = tmp_path / "site"
    neighbours.mkdir()
    for i, (html, _) in enumerate(PAGES[1:]):
        (neighbours / f"n{i}.html").write_text(html, encoding="utf-8")
    assert main(["explain", str(page), "--neighbours", str(neighbours), "--chain", "heuristic"]) == 0
    out = tmp_path / "page.html.explain.html"
    assert "nc-static" in out.read_text(encoding="utf-8")
    printed = capsys.readouterr().out
    assert "learnt from 5 neighbour pages" in printed and "site profile:" in printed


def test_cli_missing_page_is_a_one_line_error(tmp_path, capsys):
    assert main(["explain", str(tmp_path / "nope.html")]) == 1
    assert "cannot read" in capsys.readouterr().err


def test_the_report_shows_what_the_peer_rescue_kept(monkeypatch):
    """explain labels as extract_article keeps: a block the peer rescue adds is "kept" in the report too."""
    from newsclean.transforms.refine import peer_rescue

    def rescue_all(html, blocks, probs, keep, params, empty_too=False):
        assert html == PAGES[0][0]  # the page itself reaches the peer
        return [True] * len(keep)
    monkeypatch.setattr(peer_rescue, "rescue_keep", rescue_all)
    spans = labelled(explain_page(PAGES[0][0], None, DEFAULT_CONFIG).html)
    assert "classifier" not in spans and "council had voted" in spans["kept"]


def test_text_after_a_comment_or_script_is_labelled_as_the_chain_kept_it():
    """The chain removes comments and scripts keeping their tails, which join the text before them; the report
    labels such a tail with the block it joined (it showed unlabelled before)."""
    page = PAGES[0][0].replace(
        "<p>The mayor,", "<p><!-- ad slot --><script>var ad = 1;</script><select><option>Pick one</option></select>"
        "The mayor,", 1)  # the default chain removes the drop-down too
    assert page != PAGES[0][0]
    assert "The mayor, speaking at a press conference" in extract_article(page, None, DEFAULT_CONFIG).text
    report = explain_page(page, None, DEFAULT_CONFIG)
    assert "The mayor, speaking at a press conference" in labelled(report.html)["kept"]
    assert "Pick one" in labelled(report.html)["non_informative"]


def test_textarea_text_is_labelled_not_shown_as_markup():
    page = PAGES[0][0].replace('<div id="share">', '<form><textarea>Enter your comment</textarea></form><div id="share">', 1)
    report = explain_page(page, None, DEFAULT_CONFIG)
    assert "&lt;span" not in report.html
    assert "Enter your comment" in "".join(labelled(report.html).values())


def test_the_report_uses_the_site_profile_and_labels_what_it_dropped(monkeypatch):
    """explain keeps what extract_article keeps with the same signature, site profile included; a block the page
    alone keeps and the site's evidence drops is labelled ``site``."""
    from newsclean.transforms.refine import recurring

    real = recurring.recurring_text_keep

    def drop_mayor_with_profile(blocks, probs, keep, title, profile, params):
        keep = real(blocks, probs, keep, title, profile, params)
        return [k and not (profile is not None and "The mayor" in b.text) for b, k in zip(blocks, keep)]
    monkeypatch.setattr(recurring, "recurring_text_keep", drop_mayor_with_profile)
    signature = learn_site_evidence([html for html, _ in PAGES[1:]])
    assert signature.profile is not None
    assert "The mayor" not in extract_article(PAGES[0][0], signature, DEFAULT_CONFIG).text
    report = explain_page(PAGES[0][0], signature, DEFAULT_CONFIG)
    spans = labelled(report.html)
    assert "The mayor, speaking at a press conference" in spans["site"]
    assert "The mayor" not in spans["kept"] and "council had voted" in spans["kept"]
    assert report.words["site"] == count_words(spans["site"])
    alone = labelled(explain_page(PAGES[0][0], None, DEFAULT_CONFIG).html)  # no neighbours: no site evidence
    assert "site" not in alone and "The mayor" in alone["kept"]
