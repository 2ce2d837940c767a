from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from tests.store.redis_server import redis_server


@pytest.fixture(scope="session")
def redis_url() -> Iterator[str]:
    with redis_server() as url:
        yield url


@pytest.fixture(params=["sqlite", "redis"])
def store_url(request: pytest.FixtureRequest, tmp_path: Any) -> Iterator[str]:
    """A store on a real SQLite file, then on a real `redis-server` of its own."""
    if request.param == "sqlite":
        yield f"sqlite:///{tmp_path / 'state.db'}"
        return
    with redis_server() as url:
        yield url
