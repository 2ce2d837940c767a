// A two-run tool loop through @ag-ui/client's HttpAgent, once per split of the host's output.
// Run one: the frontend's tool is offered, the model calls it; the client (as a frontend does)
// runs the tool and starts run two with the result as a `tool` message; the model answers.
// The client verifies every event sequence itself (a wrong order fails the run).
// Usage: node agui_tool_loop.mjs <url> <splits as JSON: [null, 1, 2, …]> [copilotkit]; prints one
// JSON line. With `copilotkit`, the loop goes through CopilotKit's runtime (`@copilotkit/runtime`,
// its v2 AG-UI endpoint, served here on a port of its own) with an HttpAgent on <url> as its agent.
import { createServer } from "node:http";
import { createRequire } from "node:module";
const require = createRequire(process.env.NODE_PATH + "/");
const { HttpAgent } = require("@ag-ui/client");

const [given, splitsJson, through] = process.argv.slice(2);
const splits = JSON.parse(splitsJson);
let url = given;
let server = null;
if (through === "copilotkit") {
  const { CopilotRuntime } = require("@copilotkit/runtime/v2");
  const { createCopilotNodeListener } = require("@copilotkit/runtime/v2/node");
  const runtime = new CopilotRuntime({ agents: { assistant: new HttpAgent({ url: given }) } });
  const listener = createCopilotNodeListener({ runtime, basePath: "/api/copilotkit", activateChannels: false });
  server = createServer(listener);
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  url = `http://127.0.0.1:${server.address().port}/api/copilotkit/agent/assistant/run`;
}
const tools = [
  {
    name: "get_weather",
    description: "The weather in a city",
    parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"] },
  },
];
const context = [{ description: "The user's name", value: "Ada" }];

async function run(agent, params) {
  const types = [];
  const reasoning = [];
  let started = null;
  let snapshot = null;
  await agent.runAgent(params, {
    onEvent({ event }) {
      types.push(event.type);
      if (event.type === "MESSAGES_SNAPSHOT") snapshot = event.messages;
      if (event.type === "RUN_STARTED") started = { threadId: event.threadId, runId: event.runId };
      if (event.type === "REASONING_MESSAGE_CONTENT") reasoning.push(event.delta);
    },
  });
  // (the client's messages once the run is over, to hold against the snapshot it applied)
  const messages = JSON.parse(JSON.stringify(agent.messages));
  return { types, reasoning: reasoning.join(""), started, snapshot, messages };
}

const loops = [];
for (const split of splits) {
  if (process.env.AGUI_DEBUG) console.error("split", split);
  const headers = split === null ? {} : { "x-split": String(split) };
  const agent = new HttpAgent({
    url,
    headers,
    threadId: "thread-1",
    initialMessages: [{ id: "u1", role: "user", content: "What is the weather in Paris?" }],
    initialState: { unit: "celsius" },
  });
  const first = await run(agent, { runId: "run-1", tools, context });
  const assistant = agent.messages.filter((m) => m.role === "assistant");
  const calls = assistant.flatMap((m) => m.toolCalls ?? []);
  for (const call of calls) {
    const args = JSON.parse(call.function.arguments);
    agent.addMessage({ id: `result-${call.id}`, role: "tool", toolCallId: call.id, content: `Sunny in ${args.city}` });
  }
  const second = await run(agent, { runId: "run-2", tools, context });
  const last = agent.messages[agent.messages.length - 1];
  loops.push({
    split,
    calls: calls.map((c) => ({ id: c.id, name: c.function.name, arguments: JSON.parse(c.function.arguments) })),
    firstText: assistant.map((m) => m.content ?? "").join(""),
    answer: last.role === "assistant" ? last.content : null,
    first,
    second,
    roles: agent.messages.map((m) => m.role),
  });
}
server?.close();
// (exit once the line is written: a pipe takes it in pieces, and the runtime may hold timers open)
process.stdout.write(JSON.stringify(loops) + "\n", () => process.exit(0));
