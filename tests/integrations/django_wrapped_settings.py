"""The example project without its MIDDLEWARE entry: the whole application is wrapped instead."""

from __future__ import annotations

from examples.django_project.settings import *  # noqa: F403

MIDDLEWARE = ["django.middleware.common.CommonMiddleware"]
