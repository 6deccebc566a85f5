#!/usr/bin/env node
// The agentvcr command: runs the platform's binary (from the
// @agentvcr/OS-CPU package npm installed beside this one) with the
// arguments, streams and environment given, and exits as it exits.
"use strict";
const { spawnSync } = require("node:child_process");
const { binaryPath } = require("../index.js");

let bin;
try {
  bin = binaryPath();
} catch (err) {
  process.stderr.write(`agentvcr: ${err.message}\n`);
  process.exit(2);
}
const r = spawnSync(bin, process.argv.slice(2), { stdio: "inherit", windowsHide: true });
if (r.error) {
  process.stderr.write(`agentvcr: cannot run ${bin}: ${r.error.message}\n`);
  process.exit(2);
}
if (r.signal) {
  // Die of the same signal, as a shell would see the binary die.
  process.kill(process.pid, r.signal);
}
process.exit(r.status ?? 1);
