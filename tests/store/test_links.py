"""The links of a chain of responses, as properties: from any response the ids before it come back
whole and in order, in at most two batched reads past the response itself, and no record holds
more than a checkpoint's worth of ids plus one per checkpoint."""

from __future__ import annotations

import asyncio
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from toolcall_middleware.store import MemoryStore
from toolcall_middleware.store.chain import CHECKPOINT_EVERY, Link, ancestor_ids, stored_record, tombstone
from toolcall_middleware.store.state import history_of, response_key


class CountingStore(MemoryStore):
    """A memory store that counts its reads (a batched read is one)."""

    reads = 0

    async def get(self, key: str) -> Any:
        self.reads += 1
        return await super().get(key)

    async def get_many(self, keys: Any) -> list[Any]:
        self.reads += 1
        return await super().get_many(keys)


def item(n: int) -> dict[str, Any]:
    return {"id": f"msg_{n}", "type": "message", "role": "user", "content": [{"type": "input_text", "text": str(n)}]}


@given(st.integers(0, 4 * CHECKPOINT_EVERY + 3), st.data())
def test_every_response_finds_the_ids_before_it(length: int, data: st.DataObject) -> None:
    store = CountingStore()
    ids = [f"resp_{n}" for n in range(length + 1)]

    async def work() -> None:
        for depth, ident in enumerate(ids):
            record = stored_record(Link(tuple(ids[:depth]), 0.0), {"output": []}, [item(depth)], None)
            fields = record["chain"]
            assert len(fields["line"]) <= CHECKPOINT_EVERY
            assert len(fields.get("anchors", ())) <= depth // CHECKPOINT_EVERY
            if data.draw(st.booleans()):  # (a deleted response keeps its place in the chain)
                record = tombstone(record)
            await store.put({response_key("s", ident): record})
        depth = data.draw(st.integers(0, length))
        record = await store.get(response_key("s", ids[depth]))
        store.reads = 0
        assert await ancestor_ids(store, "s", ids[depth], record, None) == ids[:depth]
        assert store.reads <= 2
        assert history_of(record) == [item(depth)]

    asyncio.run(work())
