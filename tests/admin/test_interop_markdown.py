"""Moodle texts become Ringside Markdown: HTML converted, what Markdown would misread
escaped, multilang texts split into translations. Each text is checked as the pages show
it, through app.web.markdown (the renderer the pages use)."""

from __future__ import annotations

import contextlib
import html
import re

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from app.admin.interop_import import (
    FileProblem,
    Malformed,
    Rich,
    markdown,
    read_gift,
    read_moodle,
    to_question,
    to_text,
)
from app.web.markdown import render_markdown


def shown(text: str) -> str:
    """What a reader sees of Markdown ``text``: the rendered page's words, lines kept."""
    page = re.sub(r"<br\s*/?>\n?", "\n", str(render_markdown(text)))
    return html.unescape(re.sub(r"<[^>]+>", "", page)).strip()


def flat(text: str) -> str:
    return " ".join(text.split())


def rendered(text: str) -> str:
    return str(render_markdown(text))


def md(raw: str, fmt: str = "html") -> str:
    return to_text(raw, fmt)[0]


# ----------------------------------------------------------------------------- the brief


def test_superscripts_and_subscripts_become_math_not_glued_digits():
    text = md("<p>A buffer of 2<sup>10</sup> bytes, element x<sub>i</sub>, 10<sup>-3</sup> s, "
              "m<sup>2</sup>, the 1<sup>st</sup> rank.</p>")
    assert text == ("A buffer of $2^{10}$ bytes, element $x_{i}$, $10^{-3}$ s, $m^{2}$, the "
                    "1st rank.")
    page = rendered(text)
    assert "<msup><mn>2</mn><mrow><mn>10</mn></mrow></msup>" in page  # 2 to the 10th
    assert "<msub><mi>x</mi><mrow><mi>i</mi></mrow></msub>" in page
    assert "210" not in text and "<mn>210</mn>" not in page


def test_a_superscript_that_is_not_plain_stays_text_with_a_note():
    losses_text, count = to_text("<p>e<sup>iπ</sup> + 1</p>", "html")
    assert losses_text == "e^(iπ) + 1" and count == 0
    entries, _ = read_moodle(_question("<p>e<sup>iπ</sup> + 1 = 0?</p>"))
    _, notes = to_question(entries[0], "collectives", "mid", "euler", "test")
    assert "superscript 'iπ' is written as ^(…)" in notes


def test_what_markdown_would_misread_is_escaped_and_shown_as_written():
    cases = {
        "<p>Override __init__ and __call__</p>": "Override __init__ and __call__",
        "<p>Two at $666 + $666 each</p>": "Two at $666 + $666 each",
        "<p># 1 is not a heading</p>": "# 1 is not a heading",
        "<p>1. first<br>2) second<br>- third<br>+ fourth<br>&gt; quoted</p>":
            "1. first\n2) second\n- third\n+ fourth\n> quoted",
        "<p>a * b * c, snake_case, [x](y), `tick`, a | b, &amp;lt;</p>":
            "a * b * c, snake_case, [x](y), `tick`, a | b, &lt;",
        "<p>back\\slash \\(not math</p>": "back\\slash \\(not math",
        "<p>---</p><p>===</p><p>~~~</p>": "---\n===\n~~~",
    }
    for source, words in cases.items():
        assert shown(md(source)) == words, source
    assert md("<p>Override __init__</p>") == "Override \\_\\_init\\_\\_"
    assert md("<p>$666 + $666</p>") == "\\$666 + \\$666"
    assert md("<p>snake_case_name</p>") == "snake_case_name"  # inside a word: no escape


def test_html_structure_becomes_markdown():
    text = md("<h2>Setup</h2><p>A <b>ring</b> of <i>8</i> <strong>GPUs</strong>, "
              "<em>no</em> tree:</p><ul><li>reduce-scatter</li><li>all-gather<ol>"
              "<li>step</li><li>step</li></ol></li></ul><p>Run <code>torchrun --nproc 8</code>:</p>"
              "<pre><code class=\"language-python\">dist.all_reduce(t)\nprint(t)</code></pre>"
              "<blockquote><p>Quoted</p></blockquote><table><tr><th>N</th><th>steps</th></tr>"
              "<tr><td>8</td><td>14</td></tr></table>")
    assert text == (
        "### Setup\n\n"
        "A **ring** of *8* **GPUs**, *no* tree:\n\n"
        "- reduce-scatter\n- all-gather\n  1. step\n  2. step\n\n"
        "Run `torchrun --nproc 8`:\n\n"
        "```python\ndist.all_reduce(t)\nprint(t)\n```\n\n"
        "> Quoted\n\n"
        "| N | steps |\n| --- | --- |\n| 8 | 14 |")
    page = rendered(text)
    for tag in ("<h3>", "<strong>ring</strong>", "<em>8</em>", "<ul>", "<ol>",
                "<code>torchrun --nproc 8</code>", "<pre><code", "<blockquote>", "<table>"):
        assert tag in page, tag


def test_line_breaks_and_paragraphs():
    assert md("one<br>two<br><br>three") == "one\\\ntwo\n\nthree"
    assert md("line one\nline two", "moodle_auto_format") == "line one\\\nline two"
    assert md("a  b\n\nc", "plain_text") == "a  b\n\nc"
    assert "<br>" in rendered(md("one<br>two"))


def test_links_are_kept_when_they_are_web_addresses():
    assert md('<a href="https://pytorch.org/docs/stable/distributed.html">the docs</a>') == (
        "[the docs](https://pytorch.org/docs/stable/distributed.html)")
    assert md('<a href="https://example.com/a b(1).html">x</a>') == (
        "[x](https://example.com/a%20b%281%29.html)")
    assert 'href="https://pytorch.org' in rendered(md('<a href="https://pytorch.org">p</a>'))
    assert md('<a href="javascript:alert(1)">click</a>') == "click"
    assert md('<audio src="https://example.com/a.mp3"></audio>') == (
        "[audio: a.mp3](https://example.com/a.mp3)")
    assert md('<video><source src="https://example.com/v.webm"></video>') == (
        "[video: v.webm](https://example.com/v.webm)")


def test_markdown_texts_keep_their_markdown_and_code():
    source = ("**Bold**, `code with $x$ and <b>`, and\n\n```\n$ torchrun <b>\n```\n\n"
              "math \\(a<b\\), \\[x^2\\], $$y$$ but $5; <b>tag</b>\n- item")
    assert md(source, "markdown") == (
        "**Bold**, `code with $x$ and <b>`, and\n\n```\n$ torchrun <b>\n```\n\n"
        "math $a<b$, $$x^2$$, $$y$$ but \\$5; **tag**\n- item")


def test_plain_text_is_shown_as_written():
    assert md("<b>literal</b> *stars* #tag", "plain_text") == "<b>literal</b> \\*stars\\* #tag"
    assert shown(md("<b>literal</b> *stars* #tag", "plain_text")) == (
        "<b>literal</b> *stars* #tag")


def test_scripts_and_styles_are_dropped_and_images_counted():
    assert to_text("<style>p{}</style><script>alert(1)</script><img alt='plot'>", "html") == (
        "[image: plot]", 1)
    assert md('<img src="https://example.com/ring.png" alt="a ring">') == (
        "[image: a ring](https://example.com/ring.png)")


# Printable text, with every character Markdown or math gives a meaning to.
TEXT = st.text(st.characters(blacklist_categories=("Cs", "Cc", "Co"),
                             blacklist_characters="\ufffe\uffff")
               | st.sampled_from(list("\\`*_[]|$<>&#-+=~!().:;0123456789 \nabc{}")),
               max_size=60)


@settings(max_examples=300, deadline=None, suppress_health_check=list(HealthCheck))
@given(TEXT)
def test_any_plain_text_is_shown_with_its_own_characters(text):
    assert flat(shown(md(text, "plain_text"))) == flat(text)


@settings(max_examples=300, deadline=None, suppress_health_check=list(HealthCheck))
@given(TEXT)
def test_any_html_text_is_shown_with_its_own_characters(text):
    assert flat(shown(md(f"<p>{html.escape(text)}</p>"))) == flat(text)


# ----------------------------------------------------------------------------- languages


def _question(text: str, answers: str = "", name: str = "Q") -> bytes:
    answers = answers or ('<answer fraction="100"><text>yes</text></answer>'
                          '<answer fraction="0"><text>no</text></answer>')
    return (f'<quiz><question type="multichoice"><name><text><![CDATA[{name}]]></text></name>'
            f'<questiontext format="html"><text><![CDATA[{text}]]></text></questiontext>'
            f"{answers}</question></quiz>").encode()


def ml(**texts: str) -> str:
    return "".join(f'<span lang="{lang}" class="multilang">{t}</span>'
                   for lang, t in texts.items())


def test_multilang_spans_become_translations():
    payload = _question(
        f"<p>{ml(en='Which collective sums?', fr='Quelle collective somme ?', de='Welche?')}</p>",
        answers=(f'<answer fraction="100"><text><![CDATA[{ml(en="all-reduce", fr="all-reduce")}'
                 f']]></text><feedback><text><![CDATA[{ml(en="Yes", fr="Oui")}]]></text>'
                 f'</feedback></answer><answer fraction="0"><text><![CDATA['
                 f'{ml(en="broadcast", fr="diffusion")}]]></text><feedback><text><![CDATA['
                 f'{ml(en="It copies", fr="Elle copie")}]]></text></feedback></answer>'),
        name=ml(en="Sums", fr="Sommes"))
    entries, _ = read_moodle(payload)
    question, notes = to_question(entries[0], "collectives", "mid", "sums", "test")
    assert list(question.translations) == ["en", "fr"]
    en, fr = question.translations["en"], question.translations["fr"]
    assert (en.title, en.prompt) == ("Sums", "Which collective sums?")
    assert (fr.title, fr.prompt) == ("Sommes", "Quelle collective somme ?")
    assert en.choices == {"a": "all-reduce", "b": "broadcast"}
    assert fr.choices == {"a": "all-reduce", "b": "diffusion"}
    assert (en.choice_feedback, fr.choice_feedback) == ({"b": "It copies"}, {"b": "Elle copie"})
    assert 'Feedback on the correct answer "all-reduce": Oui' in fr.explanation
    assert "texts in de are not kept: Ringside's languages are en, fr, tr, zh" in notes
    assert "translations from Moodle's multilang texts: en, fr" in notes


def test_multilang2_blocks_become_translations_and_missing_ones_fall_back():
    text = Rich("{mlang en}Hello{mlang}{mlang fr,fr_ca}Bonjour{mlang}{mlang other}Hi{mlang}, "
                "all", "plain_text")
    assert markdown(text, "en") == "Hello, all"
    assert markdown(text, "fr") == "Bonjour, all"
    assert markdown(text, "zh") == "Hi, all"  # no zh block: the 'other' one
    spans = Rich(ml(en="ring", fr="anneau"))
    assert markdown(spans, "tr") == "ring"  # Moodle falls back to English
    payload = _question(f"{ml(en='Ring?', zh_cn='环?')} {{mlang en}}A{{mlang}}"
                        f"{{mlang zh}}乙{{mlang}}")
    entries, _ = read_moodle(payload)
    question, _ = to_question(entries[0], "collectives", "mid", "ring", "test")
    assert question.translations["zh"].prompt == "环? 乙"
    assert question.translations["en"].prompt == "Ring? A"


def test_a_single_multilang_span_is_not_a_translation():
    """Moodle's filter needs two spans in a row; one alone is shown in every language."""
    assert markdown(Rich('<span lang="fr" class="multilang">Bonjour</span>'), "en") == "Bonjour"
    assert markdown(Rich(ml(en="a", fr="b") + " x " + ml(fr="c")), "fr") == "b x c"


# ----------------------------------------------------------------------------- bad input


@settings(max_examples=200, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.text(max_size=300))
def test_any_gift_file_is_read_or_refused_never_raised(text):
    try:
        entries, _ = read_gift(text.encode())
    except FileProblem:
        return
    for entry in entries:
        with contextlib.suppress(Malformed):
            to_question(entry, "collectives", "mid", "x", "test")


# HTML pieces, well-formed or not, between any text.
HTML = st.lists(st.sampled_from(["<b>", "</b>", "<i>", "<p>", "</p>", "<li>", "<ul>", "<sup>",
                                 "</sup>", "<pre>", "<a href='https://x.org'>", "</a>", "<br>",
                                 "<table><tr><td>", "<img alt='*'>", "\\(", "\\)", "$$",
                                 '<span lang="fr" class="multilang">', "</span>", "{mlang fr}",
                                 "{mlang}"]) | TEXT, max_size=12).map("".join)


@settings(max_examples=200, deadline=None, suppress_health_check=list(HealthCheck))
@given(HTML)
def test_any_html_converts_without_error(text):
    for fmt in ("html", "moodle_auto_format", "markdown", "plain_text"):
        assert isinstance(md(text, fmt), str)


def test_hostile_nesting_and_size_do_not_break_the_file():
    deep = "<b>" * 5000 + "x" + "</b>" * 5000
    good = '<answer fraction="100"><text>a</text></answer><answer fraction="0"><text>b</text>' \
           "</answer>"
    huge = "y" * 200_000
    payload = (f'<quiz><question type="multichoice"><name><text>deep</text></name>'
               f"<questiontext><text><![CDATA[{deep}]]></text></questiontext>{good}</question>"
               f'<question type="multichoice"><name><text>huge</text></name>'
               f"<questiontext><text>{huge}</text></questiontext>{good}</question>"
               f'<question type="multichoice"><name><text>fine</text></name>'
               f"<questiontext><text>Fine?</text></questiontext>{good}</question></quiz>")
    entries, refused = read_moodle(payload.encode())
    assert refused == [] and len(entries) == 3
    deep_question, _ = to_question(entries[0], "collectives", "mid", "deep", "test")
    assert shown(deep_question.translations["en"].prompt) == "x"
    with pytest.raises(Malformed, match="longer than 100,000 characters"):
        to_question(entries[1], "collectives", "mid", "huge", "test")
    assert to_question(entries[2], "collectives", "mid", "fine", "test")[0].kind == (
        "single_choice")
