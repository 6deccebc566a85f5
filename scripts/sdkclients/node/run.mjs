// run.mjs SCENARIO: drives one agent SDK through one scenario and prints
// every message the SDK gives the application, one JSON object a line, on
// stdout, then the files of the agent's working directory. The executable
// the SDK spawns is $SDKC_EXE (the agentvcr stand-in,
// or a capture wrapper); the agent works in $SDKC_WORK. Model endpoints and
// keys come from the environment (scripts/sdkclients.sh sets them).
//
// Scenarios: claude-oneshot, claude-twoturns, claude-allow, claude-deny,
// qwen-oneshot, codex-workdir. $SDKC_PROMPT replaces the first prompt (the
// "changed prompt" check), $SDKC_DECISION=allow|deny canUseTool's answer.
import { query as claudeQuery } from "@anthropic-ai/claude-agent-sdk";
import { query as qwenQuery } from "@qwen-code/sdk";
import { Codex } from "@openai/codex-sdk";
import { readdirSync, statSync } from "node:fs";
import { join } from "node:path";

const scenario = process.argv[2];
const exe = process.env.SDKC_EXE;
const work = process.env.SDKC_WORK || process.cwd();
const prompt = process.env.SDKC_PROMPT || "List the files here";
const out = (m) => process.stdout.write(JSON.stringify(m) + "\n");

function claudeOptions(extra) {
  return {
    pathToClaudeCodeExecutable: exe,
    cwd: work,
    model: "claude-sonnet-4-5",
    settingSources: [],
    persistSession: false,
    ...extra,
  };
}

// userMessage is what the SDK expects from a streaming-input generator.
function userMessage(text) {
  return { type: "user", message: { role: "user", content: text }, parent_tool_use_id: null, session_id: "" };
}

async function claudeOneShot(extra) {
  for await (const m of claudeQuery({ prompt, options: claudeOptions(extra) })) out(m);
}

// Two turns of streaming input: the second user message goes out once the
// first turn's result has come, as an application talking to the agent would.
async function claudeTwoTurns() {
  let turnDone;
  let waitTurn = new Promise((r) => (turnDone = r));
  async function* input() {
    yield userMessage(prompt);
    await waitTurn;
    yield userMessage("Reply with exactly: done");
  }
  let results = 0;
  const q = claudeQuery({ prompt: input(), options: claudeOptions({ allowedTools: ["Bash"] }) });
  for await (const m of q) {
    out(m);
    if (m.type === "result") {
      results++;
      if (results === 1) turnDone();
      if (results === 2) break;
    }
  }
}

async function permission(allow) {
  // $SDKC_DECISION replaces the answer (the "changed answer" check).
  if (process.env.SDKC_DECISION) allow = process.env.SDKC_DECISION === "allow";
  const canUseTool = async (tool, input) => {
    out({ type: "app.can_use_tool", tool, input });
    return allow
      ? { behavior: "allow", updatedInput: input }
      : { behavior: "deny", message: "Not in this test." };
  };
  // An ask rule: the fake model's `ls` is read-only, which Claude Code would
  // otherwise run without asking.
  await claudeOneShot({ canUseTool, settings: { permissions: { ask: ["Bash(ls)"] } } });
}

async function qwenOneShot() {
  const q = qwenQuery({
    prompt,
    options: {
      pathToQwenExecutable: exe,
      cwd: work,
      model: "qwen3-coder",
      authType: "openai",
      permissionMode: "yolo",
    },
  });
  for await (const m of q) out(m);
}

// The thread works in a directory of its own (--cd), not in the process's.
async function codexWorkdir() {
  const codex = new Codex({ codexPathOverride: exe });
  const thread = codex.startThread({ workingDirectory: work, skipGitRepoCheck: true });
  const { events } = await thread.runStreamed(prompt);
  for await (const e of events) out(e);
}

const scenarios = {
  "claude-oneshot": () => claudeOneShot({ allowedTools: ["Bash"] }),
  "claude-twoturns": claudeTwoTurns,
  "claude-allow": () => permission(true),
  "claude-deny": () => permission(false),
  "qwen-oneshot": qwenOneShot,
  "codex-workdir": codexWorkdir,
};

if (!scenarios[scenario]) {
  console.error(`run.mjs: unknown scenario ${JSON.stringify(scenario)}; one of ${Object.keys(scenarios).join(", ")}`);
  process.exit(2);
}
// files lists the agent's working directory, recursively, with sizes: a
// replay must leave it as the recorded run did.
function files(dir, prefix = "") {
  const list = [];
  for (const e of readdirSync(dir, { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : 1))) {
    const rel = prefix + e.name;
    if (e.isDirectory()) list.push(rel + "/", ...files(join(dir, e.name), rel + "/"));
    else if (e.isFile()) list.push(`${rel} ${statSync(join(dir, e.name)).size}`);
    else list.push(`${rel} (${e.isSymbolicLink() ? "link" : "other"})`);
  }
  return list;
}

try {
  await scenarios[scenario]();
} catch (e) {
  out({ type: "app.error", message: String(e && e.message ? e.message : e) });
  process.exitCode = 1;
}
out({ type: "app.files", files: files(work) });
