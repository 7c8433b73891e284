"""The one Jinja2 environment: autoescaped templates whose blocks double as htmx fragments."""

from __future__ import annotations

import json
from collections.abc import Callable, Hashable, Mapping
from datetime import UTC, datetime
from functools import lru_cache
from typing import Any
from urllib.parse import quote

import jinja2
from babel.dates import format_datetime, format_timedelta
from fastapi import Request
from jinja2_fragments.fastapi import Jinja2Blocks
from markupsafe import Markup
from sqlalchemy.exc import SQLAlchemyError
from sqlalchemy.orm import Session
from starlette.concurrency import run_in_threadpool
from starlette.responses import HTMLResponse, Response

from app import i18n, pictures
from app.calculator.units import format_quantity
from app.config import ROOT, get_settings
from app.db import as_utc, request_sessions, utcnow
from app.lru import LRU
from app.practice import feedback
from app.practice import service as practice_service
from app.web.htmx import is_partial
from app.web.labels import translated
from app.web.markdown import close_cjk_gaps, render_inline, render_markdown
from app.web.numbers import localized_number, localized_unit, people_number

# Templates change only while developing: in production a page does not stat its files.
templates = Jinja2Blocks(env=jinja2.Environment(
    loader=jinja2.FileSystemLoader(ROOT / "templates"), autoescape=True,
    extensions=["jinja2.ext.i18n"], auto_reload=get_settings().env != "production"))
templates.env.install_gettext_callables(  # type: ignore[attr-defined]
    i18n.gettext, i18n.ngettext, newstyle=True, pgettext=i18n.pgettext)
templates.env.filters["quantity"] = lambda value, unit=None: format_quantity(
    value, unit, number=localized_number, name=localized_unit)
templates.env.filters["number"] = localized_number


def duration(seconds: float | None) -> str:
    """A time spent, for people: "2 min 50 s", "1 h 5 min", in the page's language."""
    total = round(seconds or 0)
    hours, rest = divmod(total, 3600)
    minutes, secs = divmod(rest, 60)
    if hours:
        return i18n.gettext("%(h)s h %(m)s min", h=hours, m=minutes)
    if minutes:
        return i18n.gettext("%(m)s min %(s)s s", m=minutes, s=secs)
    return i18n.gettext("%(s)s s", s=secs)


def relative_time(moment: datetime) -> str:
    """"in 8 days", "3 hours ago", as the page's language says it."""
    delta = as_utc(moment) - utcnow()
    return format_timedelta(delta, add_direction=True, locale=i18n.current_language.get())


def moment(value: datetime) -> str:
    """A date and time in the page's language (UTC, as stored)."""
    return format_datetime(as_utc(value), "medium", tzinfo=UTC,
                           locale=i18n.current_language.get()) + " UTC"


templates.env.filters["duration"] = duration
templates.env.filters["relative_time"] = relative_time
templates.env.filters["moment"] = moment
templates.env.filters["markdown"] = render_markdown
templates.env.filters["markdown_inline"] = render_inline
templates.env.globals["language_names"] = i18n.LANGUAGE_NAMES
templates.env.globals["pictures"] = pictures  # figures for questions, progress and reports


@lru_cache(maxsize=256)
def _route_template(app: Any, name: str, params: tuple[str, ...]) -> str:
    return str(app.url_path_for(name, **{p: f"__{p}__" for p in params}))


@jinja2.pass_context
def path_for(context: Any, name: str, /, **params: Any) -> str:
    """``url_for`` as a path, with each route's shape looked up once.

    Starlette's ``url_for`` walks every route on every call, which costs more than the
    rest of rendering a page; links only need the path.
    """
    template = _route_template(context["request"].app, name, tuple(sorted(params)))
    for key, value in params.items():
        template = template.replace(f"__{key}__", quote(str(value),
                                                        safe="/" if key == "path" else ""))
    return template


templates.env.globals["path_for"] = path_for


def lang_query(request: Request, separator: str = "?") -> str:
    """``?lang=fr`` when the request chose its language in the URL, else "".

    A page opened with ``?lang=fr`` keeps it in its forms and htmx requests, so the
    answer is read and graded in the language the page was shown in.
    """
    lang = request.query_params.get("lang")
    return f"{separator}lang={lang}" if lang in i18n.LANGUAGES else ""


@jinja2.pass_context
def keep_lang(context: Any, url: str) -> str:
    """``url`` with this request's ``?lang=`` carried over (see :func:`lang_query`)."""
    return url + lang_query(context["request"], "&" if "?" in url else "?")


templates.env.filters["keep_lang"] = keep_lang

# Drawn pictures kept per worker: a question's take 5-20 kB, a calculator page's up to 130 kB.
DRAWN_MAX = 256


@lru_cache(maxsize=DRAWN_MAX)
def _drawn(name: str, params: str, extra: str, prefix: str, heading: str | None,
           lang: str) -> Markup:
    figures = pictures.for_call(name, json.loads(params), prefix, json.loads(extra))
    module = templates.env.get_template("pictures/figure.html").module
    markup: Markup = module.figures(figures, heading)  # type: ignore[attr-defined]
    return markup  # a macro of an autoescaping template returns Markup


def drawn(name: str, params: Mapping[str, Any], prefix: str, heading: str | None = None,
          extra: Mapping[str, Any] | None = None) -> Markup:
    """The pictures of calculator ``name`` on ``params``, as SVG markup ("" if none).

    Drawing is most of the work of a calculator page or a graded answer, and the markup
    depends only on the numbers, the id prefix and the language (it holds no nonce and
    no token), so each combination is drawn once.
    """
    return _drawn(name, json.dumps(params, sort_keys=True, default=str),
                  json.dumps(extra or {}, sort_keys=True, default=str), prefix, heading,
                  i18n.current_language.get())


def question_pictures(question: Any, prefix: str) -> Markup:
    """A question's pictures, drawn with the numbers it was shown (its variant's)."""
    answer = question.spec.answer
    return drawn(answer.calculator.name, question.params, prefix) if answer else Markup()


templates.env.globals["question_pictures"] = question_pictures
templates.env.globals["worked_line"] = lambda step: close_cjk_gaps(
    step.render(i18n.gettext, people_number, localized_unit))
templates.env.globals["answer_label"] = feedback.answer_label
templates.env.globals["answer_help"] = feedback.answer_help
templates.env.globals["choice_order"] = practice_service.choice_order


def _due_count(request: Request, token: str) -> int:
    """Questions due for review, for the navigation: one statement, on the request's own
    session when it has one. A page still renders without it."""
    try:
        session = getattr(request.state, "db", None)
        if session is not None:
            return practice_service.due_count(session, token)
        with request_sessions(request)() as session:
            return practice_service.due_count(session, token)
    except SQLAlchemyError:
        return 0


def due_badge(request: Request) -> Markup:
    """The count beside "Review" in the navigation, for a browser that has practised."""
    token = request.cookies.get(practice_service.PROFILE_COOKIE)
    due = _due_count(request, token) if token else 0
    if not due:
        return Markup("")
    return Markup(' <span class="due-count" title="{}">{}<span class="visually-hidden"> {}'
                  "</span></span>").format(
        i18n.ngettext("%(num)d question due for review", "%(num)d questions due for review",
                      due), due, i18n.ngettext("question due", "questions due", due))


# A page that is the same for every visitor (a question, a browse page) is rendered once
# per URL, language and bank revision, with slots where each response puts its own CSRF
# token (masked afresh, BREACH) and the visitor's due count.
CSRF_SLOT = "ringside-csrf-slot"
DUE_SLOT = Markup("<!--ringside-due-slot-->")
# At most 64 MB of pages per worker (a question page is 20-40 kB, a calculator page with
# its pictures up to 130 kB): any query string makes a page of its own.
_SHARED: LRU[tuple[int, bytes]] = LRU(2048, budget=64_000_000,
                                      weigh=lambda page: len(page[1]))


def render(
    request: Request,
    template: str,
    context: dict[str, Any] | None = None,
    *,
    block: str | None = None,
    status_code: int = 200,
) -> Response:
    """Render a whole page, or only ``block`` when htmx asks for a fragment."""
    name = block if block and is_partial(request) else None
    context = {"lang": i18n.current_language.get(), "labels": translated(
        i18n.current_language.get()), **(context or {}), "due_badge": lambda: due_badge(request)}
    response = templates.TemplateResponse(
        request, template, context, block_name=name, status_code=status_code
    )
    response.headers.append("Vary", "HX-Request")
    return response


async def render_shared(
    request: Request,
    template: str,
    build: Callable[[Session], dict[str, Any]],
    *,
    block: str | None = None,
) -> Response:
    """A page made from the bank, the same for every visitor: from this worker's copy at
    the bank's current revision; ``build(session)`` gives the context when there is no
    copy yet (and may raise, a 404 say)."""
    from app.questions import repository  # the repository imports the web layer's models

    factory = request_sessions(request)
    revision = repository.recent_revision(factory) or await run_in_threadpool(
        repository.read_revision, factory)

    def context() -> tuple[dict[str, Any], int]:
        with factory() as session:
            return build(session), 200

    return await shared_page(request, template, context, block=block, version=revision)


async def shared_page(
    request: Request,
    template: str,
    context: Callable[[], tuple[dict[str, Any], int]],
    *,
    block: str | None = None,
    version: Hashable = None,
) -> Response:
    """A page that depends on nothing of the visitor but the URL, the language and
    ``version``: rendered once (``context()`` gives its context and status), then served
    from this worker's copy with the visitor's CSRF token and due count put in.

    A copy served to a visitor without a practice profile runs no statement and no
    thread; one with a profile pays the due count's one statement.
    """
    name = block if block and is_partial(request) else None
    lang = i18n.current_language.get()
    key = (template, name, lang, request.url.path, request.url.query, version)
    found = _SHARED.get(key)
    if found is None:
        found = await run_in_threadpool(_render_once, request, key, template, context, name,
                                        lang)
    status, body = found
    body = body.replace(CSRF_SLOT.encode(), request.state.csrf_token.encode())
    if DUE_SLOT.encode() in body:
        badge = (await run_in_threadpool(due_badge, request)
                 if request.cookies.get(practice_service.PROFILE_COOKIE) else "")
        body = body.replace(DUE_SLOT.encode(), str(badge).encode())
    return HTMLResponse(body, status_code=status, headers={"Vary": "HX-Request"})


def _render_once(request: Request, key: tuple[Any, ...], template: str,
                 context: Callable[[], tuple[dict[str, Any], int]], name: str | None,
                 lang: str) -> tuple[int, bytes]:
    values, status = context()
    token = request.state.csrf_token
    request.state.csrf_token = CSRF_SLOT
    try:
        values = {"lang": lang, "labels": translated(lang), **values,
                  "due_badge": lambda: DUE_SLOT}
        body = bytes(templates.TemplateResponse(request, template, values, block_name=name,
                                                status_code=status).body)
    finally:
        request.state.csrf_token = token
    return _SHARED.put(key, (status, body))
