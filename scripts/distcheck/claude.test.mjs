// A user's test of code that drives the Claude Agent SDK, through the
// agentvcr stand-in from the npm package: make dist-check runs it once to
// record (AGENTVCR_MODE=record, the fake model on loopback) and once to
// replay with the model down. The result it got goes to $RESULT_FILE.
import { test } from "node:test";
import assert from "node:assert/strict";
import { writeFileSync } from "node:fs";
import { query } from "@anthropic-ai/claude-agent-sdk";
import { standIn } from "agentvcr";

test("the agent lists the files", async () => {
  const s = standIn({ cassettes: "testdata/cassettes", realAgent: process.env.REAL_CLAUDE });
  const messages = [];
  for await (const m of query({
    prompt: "List the files here",
    options: {
      pathToClaudeCodeExecutable: s.bin("claude"),
      cwd: process.env.WORK,
      model: "claude-sonnet-4-5",
      settingSources: [],
      persistSession: false,
      env: { ...process.env, ...s.env },
    },
  })) {
    messages.push(m);
  }
  const result = messages.find((m) => m.type === "result");
  assert.ok(result, "no result message");
  assert.equal(result.subtype, "success");
  assert.ok(result.result.length > 0);
  writeFileSync(process.env.RESULT_FILE, result.result);
  s.cleanup();
});
