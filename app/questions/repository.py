"""Queries for browsing questions: filters, facet counts and a page of results.

The number of statements is fixed (one per facet, one count, one page, one for the
page's translations and tags), whatever the size of the bank or the page. Their results
are kept per worker for the bank's current revision: the bank changes rarely and is read
on every page, so a page usually costs one small statement (the revision) instead.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Hashable
from dataclasses import dataclass, replace
from typing import Any, TypeVar

from sqlalchemy import ColumnElement, Select, case, event, exists, func, or_, select
from sqlalchemy.orm import Session, selectinload, sessionmaker

from app.bank.schema import KINDS, SENIORITIES, TOPICS
from app.i18n import DEFAULT_LANGUAGE
from app.i18n.terms import synonyms
from app.lru import LRU
from app.questions.models import Question, QuestionTag, QuestionTranslation
from app.questions.search import normalise

PER_PAGE = 20
MAX_QUERY_CHARS = 100
T = TypeVar("T")
_RESULTS: LRU[Any] = LRU(1024)


def bank_revision(session: Session) -> tuple[Any, ...]:
    """What changes whenever a question does: every save of a question row bumps its
    ``version_id`` and ``updated_at`` (texts, tags and status included, through its
    content hash), and a deletion changes the count. Asked once per session."""
    if "bank_revision" not in session.info:
        count, versions, latest = session.execute(select(
            func.count(), func.coalesce(func.sum(Question.version_id), 0),
            func.max(Question.updated_at))).one()
        session.info["bank_revision"] = (str(session.get_bind().url), count, versions,
                                         str(latest))
    return session.info["bank_revision"]


# Pages shared by every visitor are keyed by the revision this worker last read, for at
# most this long: another worker's edit shows within a second, this worker's own at once.
REVISION_TTL_S = 1.0
_clock = time.monotonic
_REVISIONS: dict[Any, tuple[float, tuple[Any, ...]]] = {}  # by engine


def recent_revision(factory: sessionmaker[Session]) -> tuple[Any, ...] | None:
    """The bank revision this worker read less than a TTL ago, without a statement."""
    found = _REVISIONS.get(factory.kw["bind"])
    return found[1] if found is not None and _clock() < found[0] else None


def read_revision(factory: sessionmaker[Session]) -> tuple[Any, ...]:
    """The bank revision now (one statement), kept for :func:`recent_revision`."""
    with factory() as session:
        return worker_revision(session)


def worker_revision(session: Session) -> tuple[Any, ...]:
    """The bank revision as this worker last read it (at most a TTL ago); a session that
    wrote to the bank, or already asked, gets its own transaction's."""
    if "bank_revision" in session.info or session.info.get("wrote_bank"):
        return bank_revision(session)
    engine = session.get_bind()
    found = _REVISIONS.get(engine)
    if found is not None and _clock() < found[0]:
        return found[1]
    revision = bank_revision(session)
    _REVISIONS[engine] = (_clock() + REVISION_TTL_S, revision)
    return revision


BANK_MODELS = (Question, QuestionTranslation, QuestionTag)


@event.listens_for(Session, "after_transaction_end")
def _forget_revision(session: Session, transaction: Any) -> None:
    """A new transaction, or the rest of one after a savepoint, asks for the revision
    again (the inner transaction of each flush ends too, and changes nothing)."""
    if transaction.parent is None or transaction.nested:
        session.info.pop("bank_revision", None)


@event.listens_for(Session, "after_flush")
def _forget_revision_after_bank_writes(session: Session, _context: Any) -> None:
    """So does a session that wrote questions (not one that only saved an attempt)."""
    if any(isinstance(row, BANK_MODELS)
           for row in (*session.new, *session.dirty, *session.deleted)):
        session.info.pop("bank_revision", None)
        session.info["wrote_bank"] = True


@event.listens_for(Session, "do_orm_execute")
def _forget_revision_after_statements(state: Any) -> None:
    """And one that ran an INSERT, UPDATE or DELETE statement of its own."""
    if not state.is_select:
        state.session.info.pop("bank_revision", None)
        state.session.info["wrote_bank"] = True


@event.listens_for(Session, "after_commit")
def _forget_worker_revisions(session: Session) -> None:
    """A commit that changed the bank, or may have, is seen by this worker's next page."""
    if session.info.pop("wrote_bank", False):
        _REVISIONS.clear()


def cached(session: Session, key: Hashable, compute: Callable[[], T]) -> T:
    """``compute()`` for ``key`` at the bank's current revision, from this worker's cache
    when it holds it. Results are shared between requests: never mutate one."""
    return _RESULTS.get_or_compute((worker_revision(session), key),  # type: ignore[no-any-return]
                                   compute)


@dataclass(frozen=True)
class Filters:
    topic: str | None = None
    seniority: str | None = None
    difficulty: int | None = None
    kind: str | None = None
    tag: str | None = None
    q: str = ""
    page: int = 1

    @classmethod
    def parse(cls, params: dict[str, str]) -> tuple[Filters, list[str]]:
        """Filters from a query string; values that are not allowed are dropped and named."""
        ignored: list[str] = []

        def pick(name: str, allowed: tuple[str, ...] | list[str]) -> str | None:
            value = params.get(name) or None
            if value is not None and value not in allowed:
                ignored.append(name)
                return None
            return value

        difficulty = pick("difficulty", ("1", "2", "3"))
        page_text = params.get("page", "1")
        page = int(page_text) if page_text.isdigit() and 0 < int(page_text) < 100_000 else 1
        if page_text != "1" and page == 1 and page_text:
            ignored.append("page")
        tag = params.get("tag") or None
        if tag is not None and (len(tag) > 80 or not tag.replace("-", "").isalnum()):
            ignored.append("tag")
            tag = None
        return cls(
            topic=pick("topic", tuple(TOPICS)), seniority=pick("seniority", SENIORITIES),
            difficulty=int(difficulty) if difficulty else None, kind=pick("kind", KINDS),
            tag=tag, q=params.get("q", "")[:MAX_QUERY_CHARS].strip(), page=page,
        ), ignored

    def conditions(self, skip: str | None = None) -> list[ColumnElement[bool]]:
        """WHERE clauses for every filter except ``skip`` (a facet, or "grid" for the four
        columns the facet query groups by)."""
        where: list[ColumnElement[bool]] = [Question.public()]
        for name in ("topic", "seniority", "difficulty", "kind"):
            value = getattr(self, name)
            if value is not None and skip not in (name, "grid"):
                where.append(getattr(Question, name) == value)
        if self.tag and skip != "tag":
            where.append(exists().where(QuestionTag.question_id == Question.id,
                                        QuestionTag.tag == self.tag))
        needle = normalise(self.q)
        if needle:
            # A query that names a glossary concept finds every name of it (气泡 ↔ bubble).
            names = [QuestionTranslation.search_text.like(_like(name), escape="\\")
                     for name in synonyms(needle)]
            where.append(exists().where(QuestionTranslation.question_id == Question.id,
                                        or_(*names)))
        return where

    def query_string(self, **changes: Any) -> str:
        """This filter set as a URL query, with ``changes`` applied (page resets to 1)."""
        from urllib.parse import urlencode

        updated = replace(self, **({"page": 1} | changes))
        pairs = {k: v for k, v in updated.__dict__.items()
                 if v not in (None, "") and not (k == "page" and v == 1)}
        return urlencode(pairs)


@dataclass(frozen=True)
class Listed:
    """A question as a list shows it: no spec, no texts beyond its title."""

    slug: str
    topic: str
    seniority: str
    difficulty: int
    kind: str
    title: str
    tags: list[str]


@dataclass(frozen=True)
class BrowseResult:
    items: list[Listed]
    total: int
    facets: dict[str, list[tuple[Any, int]]]
    pages: int


def _like(needle: str) -> str:
    return "%" + needle.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"


def _topic_order() -> ColumnElement[int]:
    return case({slug: i for i, slug in enumerate(TOPICS)}, value=Question.topic, else_=99)


def _seniority_order() -> ColumnElement[int]:
    return case({s: i for i, s in enumerate(SENIORITIES)}, value=Question.seniority, else_=9)


def browse(session: Session, filters: Filters, lang: str,
           per_page: int = PER_PAGE) -> BrowseResult:
    return cached(session, ("browse", filters, lang, per_page),
                  lambda: _browse(session, filters, lang, per_page))


def _browse(session: Session, filters: Filters, lang: str, per_page: int) -> BrowseResult:
    facets, total = facet_counts(session, filters)
    pages = max(1, -(-total // per_page))
    page = min(filters.page, pages)
    rows = session.execute(
        select(Question.id, Question.slug, Question.topic, Question.seniority,
               Question.difficulty, Question.kind).where(*filters.conditions())
        .order_by(_topic_order(), _seniority_order(), Question.difficulty, Question.slug)
        .offset((page - 1) * per_page).limit(per_page)).all()
    ids = [row.id for row in rows]
    titles = _titles(session, ids, lang)
    tags: dict[int, list[str]] = {}
    if ids:
        for question_id, tag in session.execute(
                select(QuestionTag.question_id, QuestionTag.tag)
                .where(QuestionTag.question_id.in_(ids)).order_by(QuestionTag.position)):
            tags.setdefault(question_id, []).append(tag)
    items = [Listed(row.slug, row.topic, row.seniority, row.difficulty, row.kind,
                    titles.get(row.id, row.slug), tags.get(row.id, [])) for row in rows]
    return BrowseResult(items, total, facets, pages)


def _titles(session: Session, ids: list[int], lang: str) -> dict[int, str]:
    """Titles in ``lang``, falling back to English, in one query."""
    if not ids:
        return {}
    found: dict[int, dict[str, str]] = {}
    for question_id, language, text in session.execute(
            select(QuestionTranslation.question_id, QuestionTranslation.lang,
                   QuestionTranslation.title)
            .where(QuestionTranslation.question_id.in_(ids),
                   QuestionTranslation.lang.in_({lang, DEFAULT_LANGUAGE}))):
        found.setdefault(question_id, {})[language] = text
    return {qid: by_lang.get(lang) or by_lang[DEFAULT_LANGUAGE] for qid, by_lang in found.items()
            if lang in by_lang or DEFAULT_LANGUAGE in by_lang}


GRID = ("topic", "seniority", "difficulty", "kind")


def facet_counts(session: Session, filters: Filters
                 ) -> tuple[dict[str, list[tuple[Any, int]]], int]:
    """For each facet, how many questions each value would give with the other filters;
    and the total with every filter.

    One grouped query over the four grid facets (at most 12 × 3 × 3 × 4 groups, whatever
    the size of the bank), then the counts are summed here; tags take one more query.
    """
    text_and_tag = filters.conditions(skip="grid")
    columns = [getattr(Question, name) for name in GRID]
    groups = session.execute(select(*columns, func.count()).where(*text_and_tag)
                             .group_by(*columns)).all()
    chosen = {name: getattr(filters, name) for name in GRID}

    def matches(group: Any, skip: str | None) -> bool:
        return all(chosen[name] is None or name == skip or group[i] == chosen[name]
                   for i, name in enumerate(GRID))

    order = {"topic": TOPICS, "seniority": SENIORITIES, "difficulty": (1, 2, 3), "kind": KINDS}
    facets: dict[str, list[tuple[Any, int]]] = {}
    for i, name in enumerate(GRID):
        counts: dict[Any, int] = {}
        for group in groups:
            if matches(group, skip=name):
                counts[group[i]] = counts.get(group[i], 0) + group[-1]
        facets[name] = [(value, counts.get(value, 0)) for value in order[name]]
    total = sum(group[-1] for group in groups if matches(group, skip=None))
    tag_query: Select[Any] = (
        select(QuestionTag.tag, func.count()).join(Question, Question.id == QuestionTag.question_id)
        .where(*filters.conditions(skip="tag")).group_by(QuestionTag.tag)
        .order_by(func.count().desc(), QuestionTag.tag).limit(24))
    facets["tag"] = [(tag, n) for tag, n in session.execute(tag_query).all()]
    return facets, total


def live_index(session: Session) -> dict[str, tuple[int, str]]:
    """Slug → (id, content hash) of every live question, at the bank's revision."""
    return cached(session, "live", lambda: {slug: (question_id, digest) for
                                            slug, question_id, digest in session.execute(
        select(Question.slug, Question.id, Question.content_hash).where(Question.public()))})


def get_by_slug(session: Session, slug: str) -> Question | None:
    return session.scalars(
        select(Question).where(Question.slug == slug, Question.public())
        .options(selectinload(Question.translations), selectinload(Question.tags))
    ).one_or_none()


def titles(session: Session, slugs: list[str], lang: str) -> dict[str, str]:
    """Titles of live questions by slug, for follow-up links."""
    if not slugs:
        return {}
    return cached(session, ("titles", tuple(slugs), lang), lambda: _titles_by_slug(
        session, slugs, lang))


def _titles_by_slug(session: Session, slugs: list[str], lang: str) -> dict[str, str]:
    index = live_index(session)
    ids = {slug: index[slug][0] for slug in slugs if slug in index}
    by_id = _titles(session, list(ids.values()), lang)
    return {slug: by_id[qid] for slug, qid in ids.items() if qid in by_id}


def bank_figures(session: Session) -> dict[str, int]:
    live = Question.public()
    questions, topics = session.execute(
        select(func.count(), func.count(Question.topic.distinct())).where(live)).one()
    languages = session.scalar(select(func.count(QuestionTranslation.lang.distinct()))
                               .join(Question).where(live)) or 0
    return {"questions": questions, "topics": topics, "languages": languages}
