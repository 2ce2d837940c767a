from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.store.redis_server import redis_server


@pytest.fixture(scope="session")
def redis_url() -> Iterator[str]:
    with redis_server() as url:
        yield url
