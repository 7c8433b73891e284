"""Warm a worker up before it takes requests.

Each worker otherwise builds its caches on the first requests that need them: Jinja
compiles a template on first render (0.3 s for all of them), Babel compiles each
catalog, pint builds its unit registry, and every question is parsed into its model on
first view. With four workers, the first candidates of each one waited for that: the
slowest requests of a load test were these. Warming up is never fatal: a database not
yet migrated or loaded is what ``/readyz`` reports, not a reason to refuse to start.
"""

from __future__ import annotations

import time

import structlog
from sqlalchemy.exc import SQLAlchemyError

from app import i18n
from app.calculator.units import registry
from app.config import get_settings
from app.db import session_factory
from app.experiments.records import experiments
from app.questions.service import preload
from app.web.labels import translated
from app.web.templating import templates

log = structlog.get_logger("ringside")


def warm_up() -> dict[str, float]:
    """Fill the per-process caches; returns what was warmed and how long it took."""
    started = time.perf_counter()
    names = templates.env.list_templates()
    for name in names:
        templates.env.get_template(name)
    for lang in i18n.LANGUAGES:
        i18n.translations(lang)
        translated(lang)
    registry()
    experiments(get_settings().bank_dir)
    figures: dict[str, float] = {"templates": len(names)}
    try:
        with session_factory()() as session:
            figures["questions"] = preload(session)
    except SQLAlchemyError as exc:
        log.warning("warm_up_skipped_questions", error=type(exc).__name__)
    figures["ms"] = round((time.perf_counter() - started) * 1000)
    log.info("warmed_up", **figures)
    return figures
