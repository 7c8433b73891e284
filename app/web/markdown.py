"""Markdown for bank texts: CommonMark without raw HTML, ``$…$`` math as MathML, sanitised.

Math is converted on the server (latex2mathml), so explanations need no JavaScript
and no inline styles: the Content-Security-Policy stays strict, and MathML Core
renders in every current browser. nh3 then strips anything outside the allowlist
(defence in depth: raw HTML is already off in the parser).
"""

from __future__ import annotations

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


def _math(content: str, options: dict[str, Any]) -> str:
    try:
        mathml = latex_to_mathml(content, display="block" if options.get("display_mode")
                                 else "inline")
    except Exception:  # malformed LaTeX: show the source rather than fail the page
        return f"<code>{escape(content)}</code>"
    return mathml


_parser = MarkdownIt("commonmark", {"html": False}).use(dollarmath_plugin, renderer=_math) \
    .enable("table")


@lru_cache(maxsize=4096)
def render_markdown(text: str) -> Markup:
    """Safe HTML for a bank text (cached: bank texts repeat on every page view)."""
    html = _parser.render(text)
    clean = nh3.clean(html, tags=TAGS, attributes=ATTRIBUTES, url_schemes={"http", "https"},
                      link_rel="noopener noreferrer")
    return Markup(clean)  # noqa: S704 - sanitised by nh3 just above


def render_inline(text: str) -> Markup:
    """The same for one-line texts (choices, feedback): no surrounding paragraph."""
    html = str(render_markdown(text)).strip()
    if html.startswith("<p>") and html.endswith("</p>") and html.count("<p>") == 1:
        html = html[3:-4]
    return Markup(html)  # noqa: S704 - already sanitised
