"""Passwords, sign-in with throttling, and server-side sessions.

ASVS 5.0 choices (SECURITY.md): Argon2id through pwdlib, 8 to 256 characters with no
composition rules and the 10,000 most common passwords refused, exact verification;
a random 256-bit session token of which only an HMAC is stored, a new one at every
sign-in, idle and absolute expiry; failures counted per account and per address in
the database, with a wait instead of a permanent lock-out.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
from dataclasses import dataclass
from datetime import datetime, timedelta
from functools import cache

from pwdlib import PasswordHash
from sqlalchemy import delete, func, select
from sqlalchemy.orm import Session

from app.accounts.models import ROLES, LoginAttempt, User, UserSession
from app.config import get_settings
from app.db import as_utc, utcnow

MIN_PASSWORD, MAX_PASSWORD = 8, 256
COMMON_PASSWORDS = 10_000
IDLE_TIMEOUT = timedelta(minutes=30)
ABSOLUTE_LIFETIME = timedelta(hours=12)
THROTTLE_WINDOW = timedelta(minutes=15)
MAX_FAILURES_PER_ACCOUNT = 5
MAX_FAILURES_PER_ADDRESS = 20

hasher = PasswordHash.recommended()  # Argon2id, m=64 MiB, t=3, p=4
# Verified against when the account does not exist, so both cases take as long.
_DUMMY_HASH = hasher.hash("not a real password, only for timing")


class AccountError(ValueError):
    """A refused sign-in or account change; the message is safe to show.

    ``code`` lets the web pages show the message in the reader's language.
    """

    def __init__(self, message: str, code: str = "invalid", **params: object) -> None:
        super().__init__(message)
        self.code = code
        self.params = params


@cache
def _common() -> frozenset[str]:
    from zxcvbn.frequency_lists import FREQUENCY_LISTS

    return frozenset(FREQUENCY_LISTS["passwords"][:COMMON_PASSWORDS])


def password_problem(password: str, email: str = "") -> str | None:
    """Why a new password is refused, or None. No composition rules (ASVS 6.2.5)."""
    if len(password) < MIN_PASSWORD:
        return f"Use at least {MIN_PASSWORD} characters."
    if len(password) > MAX_PASSWORD:
        return f"Use at most {MAX_PASSWORD} characters."
    if password.lower() in _common():
        return "This password is among the most common ones; choose another."
    local = email.split("@", 1)[0].lower()
    if len(local) >= 4 and local in password.lower():
        return "The password must not contain your e-mail name."
    return None


def normalise_email(email: str) -> str:
    return email.strip().lower()[:254]


def create_user(session: Session, email: str, password: str, role: str = "admin") -> User:
    email = normalise_email(email)
    if "@" not in email or email.startswith("@") or email.endswith("@"):
        raise AccountError("Give an e-mail address.")
    if role not in ROLES:
        raise AccountError(f"The role is one of {', '.join(ROLES)}.")
    problem = password_problem(password, email)
    if problem:
        raise AccountError(problem)
    if session.scalar(select(User.id).where(User.email == email)) is not None:
        raise AccountError("An account with this e-mail address exists already.")
    user = User(email=email, password_hash=hasher.hash(password), role=role)
    session.add(user)
    session.flush()
    return user


@dataclass(frozen=True)
class Throttle:
    refused: bool
    retry_after: int = 0  # seconds


def throttle(session: Session, email: str, ip: str, now: datetime | None = None) -> Throttle:
    """Refuse an attempt when too many failed recently for this account or address.

    Failures count since the account's last success, within the window; the oldest
    counted failure leaving the window ends the wait (no permanent lock-out).
    """
    now = now or utcnow()
    since = now - THROTTLE_WINDOW
    last_success = session.scalar(select(func.max(LoginAttempt.created_at)).where(
        LoginAttempt.email == email, LoginAttempt.success.is_(True)))
    account_since = max(since, as_utc(last_success)) if last_success else since
    for column, value, start, limit in (
            (LoginAttempt.email, email, account_since, MAX_FAILURES_PER_ACCOUNT),
            (LoginAttempt.ip, ip, since, MAX_FAILURES_PER_ADDRESS)):
        times = session.scalars(select(LoginAttempt.created_at).where(
            column == value, LoginAttempt.success.is_(False), LoginAttempt.created_at > start)
            .order_by(LoginAttempt.created_at.desc()).limit(limit)).all()
        if len(times) >= limit:
            oldest = as_utc(times[-1])
            wait = int((oldest + THROTTLE_WINDOW - now).total_seconds()) + 1
            return Throttle(True, max(wait, 1))
    return Throttle(False)


def authenticate(session: Session, email: str, password: str, ip: str,
                 now: datetime | None = None) -> User:
    """The active user with these credentials; every attempt is recorded."""
    email = normalise_email(email)
    state = throttle(session, email, ip, now)
    if state.refused:
        minutes = max(1, round(state.retry_after / 60))
        raise AccountError(f"Too many failed sign-ins. Try again in {minutes} minute(s).",
                           "throttled", minutes=minutes)
    user = session.scalars(select(User).where(User.email == email)).one_or_none()
    valid, new_hash = hasher.verify_and_update(password[:MAX_PASSWORD * 4],
                                               user.password_hash if user else _DUMMY_HASH)
    ok = bool(user and user.is_active and valid)
    session.add(LoginAttempt(email=email, ip=ip[:64], success=ok, created_at=now or utcnow()))
    if not ok:
        raise AccountError("Wrong e-mail address or password.", "credentials")
    if new_hash:  # parameters changed since it was hashed: store the stronger hash
        user.password_hash = new_hash
    return user


def _hmac(token: str) -> str:
    key = get_settings().secret_key.get_secret_value().encode()
    return hmac.new(key, token.encode(), hashlib.sha256).hexdigest()


def start_session(session: Session, user: User, user_agent: str = "",
                  now: datetime | None = None) -> str:
    """A new session and the token for its cookie (never stored in clear)."""
    now = now or utcnow()
    token = secrets.token_urlsafe(32)
    session.add(UserSession(user_id=user.id, token_hash=_hmac(token), created_at=now,
                            last_seen_at=now, expires_at=now + ABSOLUTE_LIFETIME,
                            user_agent=user_agent[:200]))
    return token


def session_user(session: Session, token: str | None, now: datetime | None = None
                 ) -> User | None:
    """The signed-in user for a cookie token, ending the session if it expired."""
    if not token or len(token) > 100:
        return None
    now = now or utcnow()
    row = session.scalars(select(UserSession).where(UserSession.token_hash == _hmac(token))
                          ).one_or_none()
    if row is None:
        return None
    if as_utc(row.expires_at) <= now or as_utc(row.last_seen_at) + IDLE_TIMEOUT <= now:
        session.delete(row)
        return None
    user = session.get(User, row.user_id)
    if user is None or not user.is_active:
        session.delete(row)
        return None
    row.last_seen_at = now
    return user


def end_session(session: Session, token: str | None) -> None:
    if token:
        session.execute(delete(UserSession).where(UserSession.token_hash == _hmac(token)))


def end_all_sessions(session: Session, user: User) -> None:
    session.execute(delete(UserSession).where(UserSession.user_id == user.id))


def change_password(session: Session, user: User, current: str, new: str,
                    keep_token: str | None, sign_out_others: bool) -> None:
    """ASVS 6.2.3 and 7.4.3: the current password first; optionally end other sessions."""
    if not hasher.verify(current[:MAX_PASSWORD * 4], user.password_hash):
        raise AccountError("The current password is wrong.", "current")
    problem = password_problem(new, user.email)
    if problem:
        raise AccountError(problem, "weak")
    user.password_hash = hasher.hash(new)
    if sign_out_others:
        keep = _hmac(keep_token) if keep_token else ""
        session.execute(delete(UserSession).where(UserSession.user_id == user.id,
                                                  UserSession.token_hash != keep))
