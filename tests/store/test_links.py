"""The links of a chain of responses, as properties: from any response the ids before it come back
whole and in order, in at most two batched reads past its own turn, deleted responses included,
and no turn holds more than a checkpoint's worth of ids plus one per checkpoint."""

from __future__ import annotations

import asyncio
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from toolcall_middleware.store import MemoryStore
from toolcall_middleware.store._chain import CHECKPOINT_EVERY, Link, ancestor_ids, stored_records, turn_items
from toolcall_middleware.store._state import response_key, turn_key


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
            records = stored_records("s", ident, Link(tuple(ids[:depth]), 0.0), {"output": []}, [item(depth)], None)
            fields = records[turn_key("s", ident)]["chain"]
            assert len(fields["line"]) <= CHECKPOINT_EVERY
            assert len(fields.get("anchors", ())) <= depth // CHECKPOINT_EVERY
            await store.put(records)
            if data.draw(st.booleans()):  # (a deleted response keeps its place in the chain)
                await store.delete(response_key("s", ident))
        depth = data.draw(st.integers(0, length))
        turn = await store.get(turn_key("s", ids[depth]))
        store.reads = 0
        assert await ancestor_ids(store, "s", ids[depth], turn, None) == ids[:depth]
        assert store.reads <= 2
        assert turn_items(turn) == [item(depth)]

    asyncio.run(work())
