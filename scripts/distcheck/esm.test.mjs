// The helper from ESM, the default mode replay.
import { test } from "node:test";
import assert from "node:assert/strict";
import agentvcr, { standIn } from "agentvcr";

test("standIn from ESM", () => {
  delete process.env.AGENTVCR_MODE;
  const s = standIn({ cassettes: "/abs/cassettes" });
  assert.equal(s.cassettes, "/abs/cassettes");
  assert.equal(s.mode, "replay");
  assert.equal(typeof agentvcr.binaryPath, "function");
  s.cleanup();
});
