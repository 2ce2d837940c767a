"""The example Django project wrapped whole, WSGI and ASGI, instead of its MIDDLEWARE entry.

gunicorn tests.integrations.django_wrapped:wsgi      uvicorn tests.integrations.django_wrapped:asgi
"""

from __future__ import annotations

import os

os.environ["DJANGO_SETTINGS_MODULE"] = "tests.integrations.django_wrapped_settings"

from django.core.asgi import get_asgi_application
from django.core.wsgi import get_wsgi_application
from toolcall_middleware.integrations.django import wrap_asgi, wrap_wsgi

wsgi = wrap_wsgi(get_wsgi_application(), dialect="hermes")
asgi = wrap_asgi(get_asgi_application(), dialect="hermes")
