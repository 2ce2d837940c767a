// The Vercel AI SDK's Responses provider through a tool loop, with its defaults (store: true).
// Usage: node ai_sdk_tool_loop.mjs BASE_URL (with NODE_PATH at the installed packages).
// Prints one JSON line: the final text, the tool calls made, and the input of every request sent.
import { createRequire } from "node:module";
const require = createRequire(process.env.NODE_PATH + "/");
const { generateText, tool, stepCountIs } = require("ai");
const { createOpenAI } = require("@ai-sdk/openai");
const { z } = require("zod");

const sent = [];
const openai = createOpenAI({
  baseURL: process.argv[2] + "/v1",
  apiKey: "sk-vercel",
  fetch: async (url, init) => {
    if (init && init.body) sent.push(JSON.parse(init.body).input);
    return fetch(url, init);
  },
});
const calls = [];
const result = await generateText({
  model: openai.responses("recall"),
  prompt: "What is the weather in Paris?",
  tools: {
    get_weather: tool({
      description: "Weather for a city",
      inputSchema: z.object({ city: z.string() }),
      execute: async ({ city }) => {
        calls.push(city);
        return `Sunny, 21C in ${city}`;
      },
    }),
  },
  stopWhen: stepCountIs(5),
});
console.log(JSON.stringify({ text: result.text, calls, sent }));
