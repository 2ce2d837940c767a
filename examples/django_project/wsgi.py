"""WSGI entry point: `gunicorn --threads 4 examples.django_project.wsgi`."""

from __future__ import annotations

import os

from django.core.wsgi import get_wsgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "examples.django_project.settings")
application = get_wsgi_application()
