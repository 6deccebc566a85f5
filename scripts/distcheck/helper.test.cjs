// The helper's contract, from CommonJS: cassettes made absolute, mode from
// AGENTVCR_MODE, bin() the executable stand-in (agentvcr-standin, beside
// agentvcr) under the agent's name.
const { test } = require("node:test");
const assert = require("node:assert/strict");
const fs = require("node:fs");
const path = require("node:path");
const { execFileSync } = require("node:child_process");
const { standIn, binaryPath } = require("agentvcr");

test("standIn from CommonJS", () => {
  process.env.AGENTVCR_MODE = "once";
  const s = standIn({ cassettes: "testdata/cassettes" });
  assert.equal(s.cassettes, path.resolve("testdata/cassettes"));
  assert.equal(s.env.AGENTVCR_CASSETTES, s.cassettes);
  assert.equal(s.env.AGENTVCR_MODE, "once");
  const claude = s.bin("claude");
  assert.ok(path.isAbsolute(claude));
  assert.equal(path.basename(claude), process.platform === "win32" ? "claude.exe" : "claude");
  // The lean stand-in beside the agentvcr binary, linked (a copy of agentvcr where links are not allowed).
  const lean = path.join(path.dirname(binaryPath()), process.platform === "win32" ? "agentvcr-standin.exe" : "agentvcr-standin");
  assert.equal(fs.realpathSync(claude), fs.realpathSync(process.platform === "win32" ? binaryPath() : lean));
  assert.equal(s.bin("claude"), claude);
  assert.match(execFileSync(binaryPath(), ["version"], { encoding: "utf8" }), /^agentvcr v/);
  assert.throws(() => standIn({}), /cassette directory/);
  assert.throws(() => standIn({ cassettes: "x", mode: "bogus" }), /not one of/);
  s.cleanup();
  assert.equal(fs.existsSync(s.dir), false);
  delete process.env.AGENTVCR_MODE;
});
