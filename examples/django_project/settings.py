"""A minimal Django project around a raw-output model endpoint; tool calling is one MIDDLEWARE line."""

from __future__ import annotations

SECRET_KEY = "example-only-not-secret"
DEBUG = False
ALLOWED_HOSTS = ["*"]
ROOT_URLCONF = "examples.django_project.urls"
INSTALLED_APPS: list[str] = []
DATABASES: dict[str, object] = {}
USE_TZ = True

MIDDLEWARE = [
    "django.middleware.common.CommonMiddleware",
    "toolcall_middleware.integrations.django.ToolCallDjangoMiddleware",  # the retrofit
]
TOOLCALL_MIDDLEWARE = {"dialect": "hermes"}
