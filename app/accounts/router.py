"""Sign in and sign out."""

from __future__ import annotations

import structlog
from fastapi import APIRouter, Request
from starlette.responses import RedirectResponse, Response

from app.accounts import service
from app.deps import EditorUser, FormDep, SessionDep, current_user, session_cookie_name
from app.i18n import _
from app.i18n.router import safe_next
from app.web.templating import render

router = APIRouter(include_in_schema=False)
log = structlog.get_logger("ringside")


def _login_page(request: Request, error: str | None = None, email: str = "",
                status: int = 200) -> Response:
    response = render(request, "accounts/login.html", {
        "error": error, "email": email,
        "next": safe_next(request.query_params.get("next"))}, status_code=status)
    response.headers["Cache-Control"] = "no-store"
    return response


@router.get("/login", name="login")
def login_page(request: Request) -> Response:
    return _login_page(request)


@router.post("/login", name="login:submit")
def login(request: Request, form: FormDep, session: SessionDep) -> Response:
    email = str(form.get("email", ""))[:254]
    password = str(form.get("password", ""))
    ip = request.client.host if request.client else "unknown"
    try:
        user = service.authenticate(session, email, password, ip)
    except service.AccountError as exc:
        session.commit()  # the failed attempt must be recorded for throttling
        log.warning("sign_in_throttled" if exc.code == "throttled" else "sign_in_failed",
                    email=email.strip().lower())
        if exc.code == "throttled":
            message = _("Too many failed sign-ins. Try again in %(minutes)s min.",
                        minutes=exc.params["minutes"])
            return _login_page(request, message, email, status=429)
        return _login_page(request, _("Wrong e-mail address or password."), email, 401)
    # A new token at every sign-in; whatever session cookie the browser had is ended.
    service.end_session(session, request.cookies.get(session_cookie_name(request)))
    token = service.start_session(session, user, request.headers.get("user-agent", ""))
    request.state.user_id = user.id
    log.info("sign_in", user_id=user.id, role=user.role)
    target = safe_next(str(form.get("next", "/admin")) or "/admin")
    response = RedirectResponse(target if target != "/" else "/admin", status_code=303)
    response.set_cookie(session_cookie_name(request), token, httponly=True, samesite="lax",
                        secure=request.url.scheme == "https", path="/",
                        max_age=int(service.ABSOLUTE_LIFETIME.total_seconds()))
    return response


@router.post("/logout", name="logout")
def logout(request: Request, session: SessionDep) -> Response:
    log.info("sign_out")
    service.end_session(session, request.cookies.get(session_cookie_name(request)))
    response = RedirectResponse("/login", status_code=303)
    response.delete_cookie(session_cookie_name(request), path="/")
    response.headers["Clear-Site-Data"] = '"cookies", "storage"'
    return response


__all__ = ["current_user", "router"]


@router.get("/account/password", name="account:password")
def password_page(request: Request, user: EditorUser) -> Response:
    response = render(request, "accounts/password.html", {"user": user, "error": None,
                                                          "done": False})
    response.headers["Cache-Control"] = "no-store"
    return response


@router.post("/account/password", name="account:password_submit")
def change_password(request: Request, form: FormDep, session: SessionDep, user: EditorUser
                          ) -> Response:
    new = str(form.get("new_password", ""))
    error = None
    if new != str(form.get("new_password_again", "")):
        error = _("The two new passwords differ.")
    else:
        try:
            service.change_password(session, user, str(form.get("current_password", "")), new,
                                    request.cookies.get(session_cookie_name(request)),
                                    form.get("sign_out_others") == "yes")
        except service.AccountError as exc:
            error = _("The current password is wrong.") if exc.code == "current" else str(exc)
    log.info("password_change", user_id=user.id, done=error is None)
    response = render(request, "accounts/password.html", {
        "user": user, "error": error, "done": error is None},
        status_code=422 if error else 200)
    response.headers["Cache-Control"] = "no-store"
    return response
