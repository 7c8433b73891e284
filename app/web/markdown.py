"""Markdown for bank texts: CommonMark without raw HTML, ``$…$`` math as MathML, sanitised.

``$$…$$`` inside a paragraph is display math too (bank texts often end a sentence with a
formula on its own line); it is written as a block-level ``<math>`` inside a ``<span>`` so
that the paragraph around it stays one paragraph. A line break between two Chinese
characters renders as nothing, as CSS Text's segment-break rules ask, and so does a space
between two: texts are hard-wrapped in the bank, and such a space is a typo to a reader.

Math is converted on the server (latex2mathml), so explanations need no JavaScript
and no inline styles: the Content-Security-Policy stays strict, and MathML Core
renders in every current browser. nh3 then strips anything outside the allowlist
(defence in depth: raw HTML is already off in the parser).
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Any

import nh3
from latex2mathml.converter import convert as latex_to_mathml
from markdown_it import MarkdownIt
from markupsafe import Markup, escape
from mdit_py_plugins.dollarmath import dollarmath_plugin

MATHML_TAGS = {"math", "mrow", "mi", "mn", "mo", "ms", "mtext", "mspace", "msup", "msub",
               "msubsup", "mfrac", "msqrt", "mroot", "mover", "munder", "munderover",
               "mtable", "mtr", "mtd", "mstyle", "mpadded", "mphantom", "menclose",
               "semantics", "annotation"}
TAGS = {"p", "br", "strong", "em", "code", "pre", "ul", "ol", "li", "blockquote", "a",
        "table", "thead", "tbody", "tr", "th", "td", "h3", "h4", "span", "div", "hr"} | MATHML_TAGS
ATTRIBUTES = {"a": {"href", "title"}, "span": {"class"}, "div": {"class"},
              "math": {"display", "xmlns"}, "mo": {"stretchy", "fence", "separator"},
              "mfrac": {"linethickness"}, "mstyle": {"displaystyle", "scriptlevel"},
              "mspace": {"width"}, "annotation": {"encoding"}, "th": {"align"},
              "td": {"align"}}


# ``4{,}2`` (a decimal comma in TeX) comes out as two numbers around an operator, which
# browsers space as a list separator ("4, 2"): one number is what a reader expects.
_DECIMAL_COMMA = re.compile(r"<mn>([\d.,]+)</mn><mrow><mo>&#x0002C;</mo></mrow><mn>(\d+)</mn>")


def _math(content: str, options: dict[str, Any]) -> str:
    try:
        mathml = latex_to_mathml(content, display="block" if options.get("display_mode")
                                 else "inline")
    except Exception:  # malformed LaTeX: show the source rather than fail the page
        return f"<code>{escape(content)}</code>"
    while _DECIMAL_COMMA.search(mathml):
        mathml = _DECIMAL_COMMA.sub(r"<mn>\1,\2</mn>", mathml)
    return mathml


def _math_display_inline(renderer: Any, tokens: Any, idx: int, options: Any, env: Any) -> str:
    mathml = _math(tokens[idx].content.strip(), {"display_mode": True})
    return f'<span class="math display">{mathml}</span>'


# Ideographs, kana, hangul, CJK and full-width punctuation: no space is written between them.
_WIDE = re.compile(r"[\u2e80-\u9fff\uac00-\ud7af\uf900-\ufaff\ufe30-\ufe4f\uff00-\uffef]")


def _edge(tokens: Any, start: int, step: int) -> str:
    """The character next to a line break, looking through emphasis and link markup."""
    index = start
    while 0 <= index < len(tokens):
        token = tokens[index]
        if token.type in ("text", "code_inline"):
            if token.content:
                return token.content[-1] if step < 0 else token.content[0]
        elif not token.type.endswith(("_open", "_close")):
            return ""
        index += step
    return ""


def _softbreak(renderer: Any, tokens: Any, idx: int, options: Any, env: Any) -> str:
    before, after = _edge(tokens, idx - 1, -1), _edge(tokens, idx + 1, 1)
    if before and after and _WIDE.match(before) and _WIDE.match(after):
        return ""
    if (before and _FULLWIDTH_PUNCTUATION.match(before)) or (
            after and _FULLWIDTH_PUNCTUATION.match(after)):
        return ""
    return "\n"


_FULLWIDTH_PUNCTUATION = re.compile(r"[\u3000-\u303f\uff00-\uff0f\uff1a-\uff20]")

_parser = MarkdownIt("commonmark", {"html": False}).use(
    dollarmath_plugin, renderer=_math, double_inline=True).enable("table")
_parser.add_render_rule("math_inline_double", _math_display_inline)
_parser.add_render_rule("softbreak", _softbreak)


# A space between two CJK characters: YAML folds a wrapped plain scalar's line break into
# one, and no Chinese reader expects it.
_CJK_GAP = re.compile(r"(?<=[\u2e80-\u9fff\uf900-\ufaff\uff00-\uffef])[ \t]+"
                      r"(?=[\u2e80-\u9fff\uf900-\ufaff\uff00-\uffef])")


@lru_cache(maxsize=4096)
def render_markdown(text: str) -> Markup:
    """Safe HTML for a bank text (cached: bank texts repeat on every page view)."""
    html = _parser.render(_CJK_GAP.sub("", text))
    clean = nh3.clean(html, tags=TAGS, attributes=ATTRIBUTES, url_schemes={"http", "https"},
                      link_rel="noopener noreferrer")
    return Markup(clean)  # noqa: S704 - sanitised by nh3 just above


def render_inline(text: str) -> Markup:
    """The same for one-line texts (choices, feedback): no surrounding paragraph."""
    html = str(render_markdown(text)).strip()
    if html.startswith("<p>") and html.endswith("</p>") and html.count("<p>") == 1:
        html = html[3:-4]
    return Markup(html)  # noqa: S704 - already sanitised


def close_cjk_gaps(text: str) -> str:
    """``text`` without spaces between two CJK characters (for texts that are not Markdown,
    such as a worked step whose number, "1750亿", meets a Chinese word)."""
    return _CJK_GAP.sub("", text)
