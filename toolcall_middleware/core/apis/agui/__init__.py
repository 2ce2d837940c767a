"""AG-UI (`POST /v1/agui`): the event protocol agent frontends speak (CopilotKit, `@ag-ui/client`).

The frontend posts a `RunAgentInput` (its thread and run, messages, its own tools, state and
context) and reads the run as SSE events: `RUN_STARTED`, `TEXT_MESSAGE_*`, `REASONING_*`,
`TOOL_CALL_*`, then `RUN_FINISHED` or `RUN_ERROR`. No host speaks it: a run goes to the host as a
Chat Completions request (`request.run_to_chat`, then the Chat rewrite for the dialect), and the
host's raw answer comes back through the same parser and rules as every other API's
(`output.AGUIOutput`, over `emitter.AGUIEmitter`). The tool calls are the frontend's to run: it
starts the next run with their results as `tool` messages.
"""

from ._emitter import AGUIEmitter
from ._spec import SPEC

__all__ = ["SPEC", "AGUIEmitter"]
