"""Pages of the recorded experiments: what each asks, its code, what it recorded."""

from __future__ import annotations

from fastapi import APIRouter, HTTPException, Request
from sqlalchemy import select
from starlette.responses import Response

from app.config import get_settings
from app.deps import LangDep, SessionDep
from app.experiments.records import experiments
from app.i18n import _
from app.pictures.experiments import for_experiment
from app.questions.models import Question, QuestionEvidence
from app.questions.repository import titles
from app.web.templating import render

router = APIRouter(prefix="/experiments", include_in_schema=False)


@router.get("", name="experiments:index")
def index(request: Request) -> Response:
    """Every recorded experiment."""
    return render(request, "experiments/index.html",
                  {"experiments": list(experiments(get_settings().bank_dir).values())})


@router.get("/{name}", name="experiments:detail")
def detail(request: Request, name: str, session: SessionDep, lang: LangDep) -> Response:
    """The question it answers, the code, the recorded results, the questions citing it."""
    found = experiments(get_settings().bank_dir).get(name)
    if found is None:
        raise HTTPException(404, _("There is no experiment '%(name)s'.", name=name[:80]))
    slugs = list(session.scalars(
        select(Question.slug).join(QuestionEvidence)
        .where(QuestionEvidence.experiment == name, Question.public())
        .order_by(Question.slug)))
    citing = titles(session, slugs, lang)
    return render(request, "experiments/detail.html", {
        "experiment": found, "citing": [(s, citing[s]) for s in slugs if s in citing],
        "pictures_of_run": for_experiment(name, found.summary)})
