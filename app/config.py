"""Settings from the environment (prefix ``RINGSIDE_``), one object for the whole app."""

from __future__ import annotations

import secrets
from functools import lru_cache
from pathlib import Path
from typing import Literal

from pydantic import Field, SecretStr, model_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

ROOT = Path(__file__).resolve().parent.parent
PLACEHOLDER_SECRETS = {"changeme", "change-me", "secret", "dev", "development", "ringside"}
MIN_SECRET_CHARS = 32


class Settings(BaseSettings):
    """Every setting Ringside reads; each is documented in the README."""

    model_config = SettingsConfigDict(env_prefix="RINGSIDE_", extra="ignore")

    env: Literal["development", "production"] = "development"
    database_url: str = Field(
        default=f"sqlite:///{Path.cwd() / 'ringside.db'}",
        description="SQLAlchemy URL; SQLite by default, postgresql+psycopg://... in deployment",
    )
    secret_key: SecretStr = Field(
        default_factory=lambda: SecretStr(secrets.token_urlsafe(48)),
        description="Signs tokens; required in production, random per process in development",
    )
    bank_dir: Path = ROOT / "question_bank"
    allowed_hosts: list[str] = Field(
        default=["*"],
        description='Host names served (JSON list); required in production',
    )
    warm_up: bool | None = Field(
        default=None,
        description="Fill each worker's caches before it serves (default: in production)",
    )
    log_format: Literal["json", "console"] = "json"
    log_level: Literal["DEBUG", "INFO", "WARNING", "ERROR"] = "INFO"

    @model_validator(mode="after")
    def _refuse_weak_secret_in_production(self) -> Settings:
        if self.env == "production":
            key = self.secret_key.get_secret_value()
            if "RINGSIDE_SECRET_KEY" not in _environ() or key.lower() in PLACEHOLDER_SECRETS \
                    or len(key) < MIN_SECRET_CHARS:
                raise ValueError(
                    "RINGSIDE_SECRET_KEY must be set to a random value of at least "
                    f"{MIN_SECRET_CHARS} characters when RINGSIDE_ENV=production "
                    "(python -c 'import secrets; print(secrets.token_urlsafe(48))')"
                )
            if "*" in self.allowed_hosts:
                raise ValueError(
                    "RINGSIDE_ALLOWED_HOSTS must list the host names Ringside is served under "
                    "when RINGSIDE_ENV=production, e.g. '[\"ringside.example.org\"]'")
        return self


def _environ() -> dict[str, str]:
    import os

    return dict(os.environ)


@lru_cache
def get_settings() -> Settings:
    return Settings()
