"""The Agents SDK keeps its conversation on our store, both ways it offers: `previous_response_id`
between runs, and its `OpenAIConversationsSession` (the Conversations API)."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator

import openai
import pytest
from agents import Agent, OpenAIResponsesModel, Runner, set_tracing_disabled
from agents.memory import OpenAIConversationsSession

from tests.store.test_sdk import served

set_tracing_disabled(True)


@pytest.fixture(scope="module")
def base() -> Iterator[str]:
    with served("bridged", "memory") as url:
        yield url


def agent(base: str) -> tuple[Agent, openai.AsyncOpenAI]:
    client = openai.AsyncOpenAI(api_key="sk-agents", base_url=base + "/v1", max_retries=0)
    model = OpenAIResponsesModel(model="recall", openai_client=client)
    return Agent(name="recall", instructions="Repeat what you heard.", model=model), client


def test_previous_response_id_between_runs(base: str) -> None:
    async def work() -> None:
        assistant, _ = agent(base)
        first = await Runner.run(assistant, "My name is Ada.")
        assert first.final_output == "Heard: My name is Ada."
        second = await Runner.run(assistant, "What is my name?", previous_response_id=first.last_response_id)
        assert second.final_output == "Heard: My name is Ada. | What is my name?"

    asyncio.run(work())


def test_a_conversations_session(base: str) -> None:
    async def work() -> None:
        assistant, client = agent(base)
        session = OpenAIConversationsSession(openai_client=client)
        first = await Runner.run(assistant, "I like tea.", session=session)
        assert first.final_output == "Heard: I like tea."
        second = await Runner.run(assistant, "What do I like?", session=session)
        assert second.final_output == "Heard: I like tea. | What do I like?"
        items = await session.get_items()
        assert [item.get("role") for item in items if item.get("type", "message") == "message"] == [
            "user",
            "assistant",
            "user",
            "assistant",
        ]
        conversation = await session._get_session_id()
        await session.clear_session()  # deletes the conversation
        with pytest.raises(openai.NotFoundError):
            await client.conversations.retrieve(conversation)

    asyncio.run(work())
