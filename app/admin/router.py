"""The admin area: every route here needs a signed-in editor or admin."""

from __future__ import annotations

import base64

from fastapi import APIRouter, HTTPException, Request
from sqlalchemy import func, select
from sqlalchemy.orm import selectinload
from starlette.datastructures import FormData
from starlette.responses import RedirectResponse, Response

from app.accounts.models import User
from app.accounts.service import end_all_sessions
from app.admin import authoring, exchange, form_routes, interop, interop_import
from app.admin import form as question_form
from app.bank.loader import canonical, question_from_row, to_yaml
from app.bank.schema import LANGUAGES, SENIORITIES, TOPICS
from app.deps import AdminUser, EditorUser, FormDep, SessionDep
from app.i18n import _
from app.questions.models import Question, QuestionTranslation
from app.web.templating import render

router = APIRouter(prefix="/admin", include_in_schema=False)
router.include_router(form_routes.router)  # htmx pieces of the structured form
STATUSES = ("draft", "published", "archived")


def _private(response: Response) -> Response:
    response.headers["Cache-Control"] = "no-store"
    return response


@router.get("", name="admin:dashboard")
def dashboard(request: Request, session: SessionDep, user: EditorUser) -> Response:
    """Bank coverage: topic × seniority, and questions per language."""
    live = Question.status != "archived"
    grid: dict[tuple[str, str], int] = {
        (topic, seniority): n for topic, seniority, n in session.execute(
            select(Question.topic, Question.seniority, func.count()).where(live)
            .group_by(Question.topic, Question.seniority))}
    total = sum(grid.values())
    # json_array_length exists with this name in SQLite and PostgreSQL alike.
    stale = session.execute(select(Question.slug, Question.stale_languages).where(
        live, func.json_array_length(Question.stale_languages) > 0)
        .order_by(Question.slug)).all()
    ids = authoring.known_ids(session)
    drafts = [(row.slug, authoring.check_text(session, authoring.current_text(row), ids))
              for row in session.scalars(select(Question).where(Question.status == "draft")
                                         .order_by(Question.slug).limit(50).options(
                  selectinload(Question.translations), selectinload(Question.tags)))]
    per_language = dict(session.execute(
        select(QuestionTranslation.lang, func.count()).join(Question).where(live)
        .group_by(QuestionTranslation.lang)).all())
    return _private(render(request, "admin/dashboard.html", {
        "user": user, "grid": grid, "topics": TOPICS, "seniorities": SENIORITIES,
        "languages": LANGUAGES, "per_language": per_language, "total": total,
        "stale": [(slug, langs) for slug, langs in stale if langs],
        "failing": [(slug, len(c.problems)) for slug, c in drafts if c.problems]}))


@router.get("/users", name="admin:users")
def users(request: Request, session: SessionDep, user: AdminUser) -> Response:
    """Accounts (admins only)."""
    accounts = session.scalars(select(User).order_by(User.email)).all()
    return _private(render(request, "admin/users.html", {"user": user, "accounts": accounts}))


# ----------------------------------------------------------------------------- authoring


@router.get("/questions", name="admin:questions")
def question_list(request: Request, session: SessionDep, user: EditorUser) -> Response:
    """Every question, drafts and archived ones included, with its status."""
    status = request.query_params.get("status")
    topic = request.query_params.get("topic")
    query = select(Question.slug, Question.topic, Question.seniority, Question.kind,
                   Question.status, Question.version_id, Question.updated_at)
    if status in STATUSES:
        query = query.where(Question.status == status)
    if topic in TOPICS:
        query = query.where(Question.topic == topic)
    rows = session.execute(query.order_by(Question.topic, Question.slug)).all()
    return _private(render(request, "admin/questions.html", {
        "user": user, "rows": rows, "statuses": STATUSES, "topics": TOPICS,
        "status": status, "topic": topic}))


def _form(request: Request, user: User, *, text: str, slug: str | None, version: int | None,
          status: str | None = None, checked: authoring.Checked | None = None,
          message: str | None = None, code: int = 200, stale: list[str] | None = None,
          fields: dict | None = None, ids: set[str] | None = None) -> Response:
    """The editor: the structured form when ``fields`` is given, else the YAML text."""
    extra = question_form.page_context(fields, ids or set()) if fields is not None else {}
    return _private(render(request, "admin/question_form.html", {
        "user": user, "text": text, "slug": slug, "version": version, "status": status,
        "checked": checked, "message": message, "stale": stale or [],
        "editor": "fields" if fields is not None else "yaml", **extra}, status_code=code))


def _yaml_mode(request: Request) -> bool:
    return request.query_params.get("editor") == "yaml"


@router.get("/questions/new", name="admin:question_new")
def new_question(request: Request, session: SessionDep, user: EditorUser) -> Response:
    if _yaml_mode(request):
        return _form(request, user, text=authoring.NEW_QUESTION, slug=None, version=None)
    return _form(request, user, text="", slug=None, version=None,
                 fields=question_form.new_question(), ids=authoring.known_ids(session))


def _source(session: SessionDep, form: FormData
            ) -> tuple[str, dict | None, authoring.Checked]:
    """The question's YAML, from the text or from the structured form, and its checks."""
    if form.get(question_form.EDITOR_FIELD) == "fields":
        return question_form.check_form(session, form)
    text = str(form.get("text", ""))
    return text, None, authoring.check_text(session, text)


@router.post("/questions/check", name="admin:question_check")
def check(request: Request, form: FormDep, session: SessionDep, user: EditorUser) -> Response:
    """Every bank check on the form's content, field by field (an htmx fragment)."""
    _text, _fields, checked = _source(session, form)
    return render(request, "admin/question_form.html", {
        "user": user, "checked": checked, "text": "", "slug": None, "version": None},
        block="check")


def _save(request: Request, form: FormData, session: SessionDep, user: User,
          row: Question | None) -> Response:
    text, fields, checked = _source(session, form)
    action = form.get("action")
    version_text = str(form.get("version", ""))
    version = int(version_text) if version_text.isdigit() else None
    slug = row.slug if row else None
    keep = {"text": text, "slug": slug, "version": version, "status": row.status if row
            else None, "stale": list(row.stale_languages) if row else [], "fields": fields,
            "ids": authoring.known_ids(session) if fields is not None else None}
    if row is not None and action == "archive":
        try:
            authoring.archive(session, row, user.email, version)
        except authoring.StaleEdit as exc:
            return _form(request, user, **keep, code=409, message=_stale(exc))
        return RedirectResponse(f"/admin/questions/{row.slug}?done=archived", status_code=303)
    if checked.question is None or (action == "publish" and checked.problems):
        message = _("Not published: fix the problems below (a draft can still be saved).") \
            if checked.question is not None else _("The text is not a valid question yet.")
        return _form(request, user, **keep, checked=checked, message=message, code=422)
    if row is None and authoring.load(session, checked.question.id) is not None:
        return _form(request, user, **keep, checked=checked, code=409,
                     message=_("A question with this id exists already."))
    try:
        saved = authoring.save(session, row, checked.question,
                               "published" if action == "publish" else "draft", user.email,
                               version, note=str(form.get("note", ""))[:200],
                               confirm_translations=form.get("confirm_translations") == "yes")
    except authoring.StaleEdit as exc:
        return _form(request, user, **keep, checked=checked, code=409, message=_stale(exc))
    except ValueError as exc:
        return _form(request, user, **keep, checked=checked, code=422, message=str(exc))
    return RedirectResponse(f"/admin/questions/{saved.slug}?done={saved.status}",
                            status_code=303)


def _stale(exc: authoring.StaleEdit) -> str:
    return _("Someone saved this question since you opened it (now version %(v)s). Your "
             "text is kept below: compare with the latest revision, then save again.",
             v=exc.current_version)


@router.post("/questions", name="admin:question_create")
def create(request: Request, form: FormDep, session: SessionDep, user: EditorUser
           ) -> Response:
    return _save(request, form, session, user, None)


def _question_or_404(session: SessionDep, slug: str) -> Question:
    row = authoring.load(session, slug) if len(slug) <= 80 else None
    if row is None:
        raise HTTPException(404, _("There is no question '%(id)s'.", id=slug[:80]))
    return row


@router.get("/questions/{slug}", name="admin:question_edit")
def edit(request: Request, slug: str, session: SessionDep, user: EditorUser) -> Response:
    row = _question_or_404(session, slug)
    done = request.query_params.get("done")
    message = {"draft": _("Draft saved."), "published": _("Published."),
               "archived": _("Archived: candidates no longer see it.")}.get(done or "")
    pending = authoring.pending_draft(session, row)
    shown = pending or question_from_row(row)
    if pending is not None:
        message = " ".join(m for m in (message, _(
            "A draft is saved: the published version stays live until you publish it.")) if m)
    fields = None if _yaml_mode(request) else question_form.form_from_data(canonical(shown))
    return _form(request, user, text=to_yaml(shown), slug=row.slug,
                 version=row.version_id, status=row.status, message=message,
                 stale=list(row.stale_languages), fields=fields,
                 ids=authoring.known_ids(session) if fields is not None else None)


@router.post("/questions/{slug}", name="admin:question_save")
def update(request: Request, slug: str, form: FormDep, session: SessionDep, user: EditorUser
           ) -> Response:
    return _save(request, form, session, user, _question_or_404(session, slug))


@router.get("/questions/{slug}/revisions", name="admin:question_revisions")
def question_revisions(request: Request, slug: str, session: SessionDep, user: EditorUser
                       ) -> Response:
    row = _question_or_404(session, slug)
    return _private(render(request, "admin/revisions.html", {
        "user": user, "row": row, "revisions": authoring.revisions(session, row)}))


@router.post("/questions/{slug}/revisions/{revision_id}/restore",
             name="admin:question_restore")
def restore(request: Request, slug: str, revision_id: int, session: SessionDep,
            user: EditorUser) -> Response:
    """Bring an old revision back as a new draft (publish it after checking it)."""
    row = _question_or_404(session, slug)
    old = authoring.revision(session, row, revision_id)
    if old is None:
        raise HTTPException(404, _("There is no such revision."))
    authoring.save(session, row, old, "draft", user.email, row.version_id,
                   note=f"restored revision {revision_id}")
    return RedirectResponse(f"/admin/questions/{slug}?done=draft", status_code=303)


# ----------------------------------------------------------------------------- exchange


@router.get("/export.zip", name="admin:export")
def export(request: Request, session: SessionDep, user: EditorUser) -> Response:
    """The bank (published questions, optionally one topic) as a zip of YAML files."""
    topic = request.query_params.get("topic")
    payload = exchange.export_zip(session, topic if topic in TOPICS else None)
    return Response(payload, media_type="application/zip", headers={
        "Content-Disposition": 'attachment; filename="ringside-bank.zip"',
        "Cache-Control": "no-store"})


def _import_page(request: Request, user: User, code: int = 200, **context: object
                 ) -> Response:
    return _private(render(request, "admin/import.html", {
        "user": user, "preview": None, "interop": None, "topics": TOPICS,
        "seniorities": SENIORITIES, **context}, status_code=code))


@router.get("/import", name="admin:import")
def import_form(request: Request, user: EditorUser) -> Response:
    return _import_page(request, user)


@router.post("/import", name="admin:import_submit")
def import_zip(request: Request, form: FormDep, session: SessionDep, user: EditorUser
               ) -> Response:
    """First a preview of what would be added, changed and refused; then apply it.

    A zip holds our own files; Moodle XML and GIFT become drafts in the topic and
    seniority chosen on the form (those formats do not carry them).
    """
    fmt = str(form.get("format", "zip"))
    topic, seniority = str(form.get("topic", "")), str(form.get("seniority", ""))
    if form.get("action") == "apply":
        try:
            payload = base64.b64decode(str(form.get("payload", "")), validate=True)
        except ValueError:
            raise HTTPException(422, _("The import was damaged; upload the file again.")
                                ) from None
        if fmt in interop_import.FORMATS:
            if topic not in TOPICS or seniority not in SENIORITIES:
                raise HTTPException(422, _("The import was damaged; upload the file again."))
            result = interop_import.apply_import(session, payload, fmt, topic, seniority,
                                                 user.email, str(form.get("filename", "")))
            return _import_page(request, user, interop=result, applied=True, topic=topic,
                                seniority=seniority)
        preview = exchange.apply_zip(session, payload, user.email)
        return _import_page(request, user, preview=preview, applied=True)
    upload = form.get("file")
    if upload is None or isinstance(upload, str):
        raise HTTPException(422, _("Choose a file to import."))
    payload = upload.file.read(exchange.MAX_ZIP_BYTES + 1)
    filename = (upload.filename or "")[:100]
    fmt = interop_import.detect_format(filename, payload)
    if fmt != "zip":
        if topic not in TOPICS or seniority not in SENIORITIES:
            return _import_page(request, user, code=422, topic=topic, seniority=seniority,
                                message=_("Choose the topic and seniority of the imported "
                                          "questions: Moodle XML and GIFT do not carry them."))
        result = interop_import.preview_import(session, payload, fmt, topic, seniority,
                                               filename)
        return _import_page(request, user, interop=result, applied=False, topic=topic,
                            seniority=seniority, filename=filename,
                            payload=base64.b64encode(payload).decode() if result.drafts
                            else "")
    preview = exchange.preview_zip(session, payload)
    return _import_page(request, user, preview=preview, applied=False,
                        payload=base64.b64encode(payload).decode() if preview.accepted else "")


@router.get("/export.{fmt}", name="admin:export_other")
def export_other(request: Request, fmt: str, session: SessionDep, user: EditorUser
                 ) -> Response:
    """Moodle XML or GIFT in one language; what the format cannot carry is reported."""
    if fmt not in ("moodle.xml", "gift", "report.txt"):
        raise HTTPException(404, _("Unknown export format."))
    lang = request.query_params.get("lang", "en")
    if lang not in LANGUAGES:
        raise HTTPException(422, _("Choose one of the four languages."))
    topic = request.query_params.get("topic")
    query = select(Question).where(Question.status == "published").order_by(Question.slug)
    if topic in TOPICS:
        query = query.where(Question.topic == topic)
    questions = [question_from_row(row) for row in session.scalars(query.options(
        selectinload(Question.translations), selectinload(Question.tags)))]
    exported = (interop.to_moodle_xml if fmt != "gift" else interop.to_gift)(questions, lang)
    if fmt == "report.txt":
        return Response("\n".join(exported.notes) + "\n",
                        media_type="text/plain; charset=utf-8")
    media = "application/xml" if fmt == "moodle.xml" else "text/plain"
    return Response(exported.text, media_type=f"{media}; charset=utf-8", headers={
        "Content-Disposition": f'attachment; filename="ringside-{lang}.{fmt}"',
        "Cache-Control": "no-store"})


@router.post("/users/{user_id}", name="admin:user_update")
def update_user(request: Request, user_id: int, form: FormDep, session: SessionDep,
                user: AdminUser) -> Response:
    """Disable or enable an account, or change its role; disabling ends its sessions."""
    target = session.get(User, user_id)
    if target is None:
        raise HTTPException(404, _("There is no such account."))
    action = form.get("action")
    if target.id == user.id and action in ("disable", "editor"):
        raise HTTPException(409, _("You cannot disable or demote your own account."))
    if action == "disable":
        target.is_active = False
        end_all_sessions(session, target)
    elif action == "enable":
        target.is_active = True
    elif action in ("admin", "editor"):
        target.role = action
    else:
        raise HTTPException(422, _("Unknown action."))
    return RedirectResponse("/admin/users", status_code=303)
