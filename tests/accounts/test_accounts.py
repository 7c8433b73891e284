"""Accounts, sessions, throttling and the admin guard (SECURITY.md items 11-17)."""

from __future__ import annotations

import itertools
import re
import subprocess
import sys
from datetime import timedelta
from urllib.parse import quote

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import select, update
from sqlalchemy.orm import Session

from app.accounts import service
from app.accounts.models import LoginAttempt, UserSession
from app.main import app
from tests.conftest import app_routes

PASSWORD = "a perfectly fine passphrase"
_numbers = itertools.count(1)


def browser(ip: str | None = None, https: bool = False) -> TestClient:
    n = next(_numbers)
    client = TestClient(app, client=(ip or f"10.0.{n // 250}.{n % 250}", 40000),
                        base_url="https://testserver" if https else "http://testserver")
    client.get("/login")
    return client


def make_user(engine, role: str = "admin", password: str = PASSWORD) -> str:
    email = f"user{next(_numbers)}@example.org"
    with Session(engine) as session, session.begin():
        service.create_user(session, email, password, role)
    return email


def sign_in(client: TestClient, email: str, password: str = PASSWORD, **extra: str):
    return client.post("/login", follow_redirects=False, data={
        "csrf_token": client.cookies.get("csrftoken"), "email": email, "password": password,
        **extra})


class TestPasswords:
    @pytest.mark.parametrize("password", ["12345678", "password1", "qwertyuiop"])
    def test_common_passwords_are_refused(self, password):
        assert "common" in service.password_problem(password)

    def test_length_rules_without_composition_rules(self):
        assert service.password_problem("seven77") is not None
        assert service.password_problem("eightchr") is None  # no digit or symbol needed
        assert service.password_problem("x" * 64 + " long one") is None
        assert service.password_problem("mot de passe très sûr 密码") is None

    def test_hash_is_argon2id_and_verification_is_exact(self, engine):
        with Session(engine) as session, session.begin():
            user = service.create_user(session, "exact@example.org", " spaces kept  ")
            assert user.password_hash.startswith("$argon2id$")
        with Session(engine) as session, session.begin():
            with pytest.raises(service.AccountError):
                service.authenticate(session, "exact@example.org", "spaces kept", "1.1.1.1")
            assert service.authenticate(session, "exact@example.org", " spaces kept  ",
                                        "1.1.1.1")

    def test_no_default_account_and_the_cli_creates_the_first_admin(self, engine, tmp_path):
        url = f"sqlite:///{tmp_path / 'cli.db'}"
        env = {"RINGSIDE_DATABASE_URL": url, "PATH": "/usr/bin:/bin"}
        run = [sys.executable, "-m", "app.cli"]
        subprocess.run([*run, "db", "upgrade"], env=env, check=True, capture_output=True)
        from app.db import make_engine

        fresh = make_engine(url)
        with fresh.connect() as connection:
            assert connection.exec_driver_sql("SELECT count(*) FROM user_account").scalar() == 0
        made = subprocess.run([*run, "admin", "create", "first@example.org",
                               "--password-stdin"], input=PASSWORD + "\n", env=env,
                              capture_output=True, text=True)
        assert made.returncode == 0, made.stderr
        weak = subprocess.run([*run, "admin", "create", "second@example.org",
                               "--password-stdin"], input="password\n", env=env,
                              capture_output=True, text=True)
        assert weak.returncode == 2 and "common" in weak.stderr


class TestSignIn:
    def test_sign_in_gives_a_fresh_server_side_session(self, client, web_engine):
        email = make_user(web_engine)
        planted = browser()
        planted.cookies.set("ringside_session", "planted-by-an-attacker-" + "x" * 30)
        response = sign_in(planted, email)
        assert response.status_code == 303 and response.headers["location"] == "/admin"
        cookie = response.headers["set-cookie"]
        token = cookie.split("ringside_session=", 1)[1].split(";", 1)[0]
        assert token != "planted-by-an-attacker-" + "x" * 30 and len(token) >= 43
        attacker = browser()  # the planted value never becomes a session
        attacker.cookies.set("ringside_session", "planted-by-an-attacker-" + "x" * 30)
        assert attacker.get("/admin", follow_redirects=False).status_code == 303
        user_browser = browser()
        user_browser.cookies.set("ringside_session", token)
        assert "HttpOnly" in cookie and "SameSite=lax" in cookie and "Path=/" in cookie
        assert "Domain" not in cookie
        with Session(web_engine) as session:
            hashes = session.scalars(select(UserSession.token_hash)).all()
        assert token not in hashes  # only its HMAC is stored
        assert user_browser.get("/admin").status_code == 200

    def test_https_cookie_is_secure_with_host_prefix(self, client, web_engine):
        email = make_user(web_engine)
        secure = browser(https=True)
        cookie = sign_in(secure, email).headers["set-cookie"]
        assert cookie.startswith("__Host-ringside_session=") and "Secure" in cookie

    def test_wrong_password_and_unknown_account_read_the_same(self, client, web_engine):
        email = make_user(web_engine)
        wrong = sign_in(browser(), email, "not the password")
        unknown = sign_in(browser(), "nobody@example.org", "not the password")
        assert wrong.status_code == unknown.status_code == 401
        assert "Wrong e-mail address or password." in wrong.text
        assert "Wrong e-mail address or password." in unknown.text

    def test_sign_out_ends_the_session_on_the_server(self, client, web_engine):
        email = make_user(web_engine)
        user_browser = browser()
        sign_in(user_browser, email)
        token = user_browser.cookies.get("ringside_session")
        out = user_browser.post("/logout", follow_redirects=False,
                                data={"csrf_token": user_browser.cookies.get("csrftoken")})
        assert out.status_code == 303 and "cookies" in out.headers["clear-site-data"]
        replay = browser()
        replay.cookies.set("ringside_session", token)
        assert replay.get("/admin", follow_redirects=False).headers["location"].startswith(
            "/login")

    @pytest.mark.parametrize("field", ["last_seen_at", "expires_at"])
    def test_idle_and_absolute_expiry(self, client, web_engine, field):
        email = make_user(web_engine)
        user_browser = browser()
        sign_in(user_browser, email)
        past = service.utcnow() - timedelta(hours=13)
        with Session(web_engine) as session, session.begin():
            session.execute(update(UserSession).values(**{field: past}).where(
                UserSession.token_hash == service._hmac(
                    user_browser.cookies.get("ringside_session"))))
        assert user_browser.get("/admin", follow_redirects=False).status_code == 303

    def test_throttling_per_account_then_recovery(self, client, web_engine):
        email = make_user(web_engine)
        attacker = browser()
        for _ in range(service.MAX_FAILURES_PER_ACCOUNT):
            assert sign_in(attacker, email, "guess").status_code == 401
        refused = sign_in(browser(), email)  # even the right password, from elsewhere
        assert refused.status_code == 429 and "Too many failed sign-ins" in refused.text
        with Session(web_engine) as session, session.begin():  # the window passes
            session.execute(update(LoginAttempt).where(LoginAttempt.email == email).values(
                created_at=service.utcnow() - timedelta(minutes=16)))
        assert sign_in(browser(), email).status_code == 303  # no permanent lock-out

    def test_throttling_per_address(self, client, web_engine):
        address = "192.0.2.77"
        victim = make_user(web_engine)
        attacker = browser(ip=address)
        for i in range(service.MAX_FAILURES_PER_ADDRESS):  # spread over many accounts
            assert sign_in(attacker, f"ghost{i}@example.org", "guess").status_code == 401
        assert sign_in(browser(ip=address), victim).status_code == 429
        assert sign_in(browser(), victim).status_code == 303  # other addresses are not


class TestAdminGuard:
    def admin_routes(self):
        """Every route under /admin, found in the app (new ones are covered automatically)."""
        return [r for r in app_routes() if getattr(r, "path", "").startswith("/admin")]

    def test_every_admin_page_refuses_anonymous_users(self, client):
        anonymous = browser()
        routes = self.admin_routes()
        assert routes
        for route in routes:
            path = re.sub(r"\{[^}]+\}", "1", route.path)
            for method in route.methods:
                response = anonymous.request(method, path, follow_redirects=False)
                if method == "GET":
                    assert response.status_code == 303, path
                    assert response.headers["location"] == f"/login?next={quote(path)}"
                else:
                    assert response.status_code in (401, 403), path

    def test_editors_cannot_manage_accounts(self, client, web_engine):
        editor = browser()
        sign_in(editor, make_user(web_engine, role="editor"))
        assert editor.get("/admin").status_code == 200
        assert editor.get("/admin/users").status_code == 403

    def test_admin_pages_are_not_cached(self, client, web_engine):
        admin = browser()
        sign_in(admin, make_user(web_engine))
        assert admin.get("/admin").headers["cache-control"] == "no-store"
        assert admin.get("/admin/users").headers["cache-control"] == "no-store"

    def test_sign_in_returns_to_the_page_asked_for_but_never_off_site(self, client, web_engine):
        email = make_user(web_engine)
        assert sign_in(browser(), email, next="/admin/users").headers["location"] == \
            "/admin/users"
        assert sign_in(browser(), email, next="https://evil.example/").headers[
            "location"] == "/admin"


class TestUserManagement:
    def test_disabling_a_user_ends_their_sessions(self, client, web_engine):
        from app.accounts.models import User

        boss, victim = browser(), browser()
        sign_in(boss, make_user(web_engine, role="admin"))
        victim_email = make_user(web_engine, role="editor")
        sign_in(victim, victim_email)
        assert victim.get("/admin").status_code == 200
        with Session(web_engine) as session:
            victim_id = session.scalar(select(User.id).where(User.email == victim_email))
        response = boss.post(f"/admin/users/{victim_id}", follow_redirects=False, data={
            "csrf_token": boss.cookies.get("csrftoken"), "action": "disable"})
        assert response.status_code == 303
        assert victim.get("/admin", follow_redirects=False).status_code == 303
        assert sign_in(browser(), victim_email).status_code == 401

    def test_admins_cannot_lock_themselves_out_and_editors_cannot_manage(self, client,
                                                                         web_engine):
        from app.accounts.models import User

        boss = browser()
        email = make_user(web_engine, role="admin")
        sign_in(boss, email)
        with Session(web_engine) as session:
            own = session.scalar(select(User.id).where(User.email == email))
        assert boss.post(f"/admin/users/{own}", data={
            "csrf_token": boss.cookies.get("csrftoken"), "action": "disable"}).status_code == 409
        editor = browser()
        sign_in(editor, make_user(web_engine, role="editor"))
        assert editor.post(f"/admin/users/{own}", data={
            "csrf_token": editor.cookies.get("csrftoken"), "action": "disable"}).status_code == 403


class TestPasswordChange:
    def change(self, client: TestClient, **fields: str):
        return client.post("/account/password", data={
            "csrf_token": client.cookies.get("csrftoken"), **fields})

    def test_needs_the_current_password_and_a_good_new_one(self, client, web_engine):
        user = browser()
        sign_in(user, make_user(web_engine))
        wrong = self.change(user, current_password="nope", new_password="another fine one",
                            new_password_again="another fine one")
        assert wrong.status_code == 422 and "current password is wrong" in wrong.text
        weak = self.change(user, current_password=PASSWORD, new_password="password1",
                           new_password_again="password1")
        assert weak.status_code == 422 and "common" in weak.text
        typo = self.change(user, current_password=PASSWORD, new_password="another fine one",
                           new_password_again="another fine 0ne")
        assert typo.status_code == 422

    def test_signs_out_the_other_sessions_and_keeps_this_one(self, client, web_engine):
        email = make_user(web_engine)
        here, elsewhere = browser(), browser()
        sign_in(here, email)
        sign_in(elsewhere, email)
        done = self.change(here, current_password=PASSWORD, new_password="another fine one",
                           new_password_again="another fine one", sign_out_others="yes")
        assert done.status_code == 200
        assert here.get("/admin").status_code == 200
        assert elsewhere.get("/admin", follow_redirects=False).status_code == 303
        assert sign_in(browser(), email, "another fine one").status_code == 303
        assert sign_in(browser(), email).status_code == 401

    def test_anonymous_users_are_sent_to_sign_in(self, client):
        response = browser().get("/account/password", follow_redirects=False)
        assert response.headers["location"] == "/login?next=/account/password"
