from __future__ import annotations

from django.urls import path

from . import views

urlpatterns = [
    path("", views.index),
    path("v1/chat/completions", views.chat),
    path("v1/responses", views.responses),
]
