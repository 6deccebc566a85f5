// agentvcr for Node: the path of the platform's agentvcr binary, and
// standIn(), which points an agent SDK at a stand-in that replays (or
// records) the agent's runs from a cassette directory. See
// https://github.com/agentvcr/agentvcr/blob/main/docs/sdk.md.
"use strict";
const fs = require("node:fs");
const os = require("node:os");
const path = require("node:path");

const MODES = ["replay", "record", "once", "passthrough", "rerun"];

// The npm package that holds this platform's binary.
function platformPackage() {
  return `@agentvcr/${process.platform}-${process.arch}`;
}

// binaryPath is the absolute path of the agentvcr binary: $AGENTVCR_BINARY
// when set, else the one of this platform's package.
function binaryPath() {
  if (process.env.AGENTVCR_BINARY) return path.resolve(process.env.AGENTVCR_BINARY);
  const pkg = platformPackage();
  const exe = process.platform === "win32" ? "agentvcr.exe" : "agentvcr";
  let dir;
  try {
    dir = path.dirname(require.resolve(`${pkg}/package.json`));
  } catch {
    throw new Error(
      `no agentvcr binary for ${process.platform}-${process.arch}: the package ${pkg} is not installed. ` +
        "Install agentvcr with its optional dependencies (not --omit=optional or --no-optional), " +
        "or set AGENTVCR_BINARY to an agentvcr binary."
    );
  }
  return path.join(dir, "bin", exe);
}

// standIn makes a private directory holding the stand-in under agent names
// and the environment the stand-in reads; see index.d.ts. The stand-in is
// agentvcr-standin, beside the agentvcr binary, linked: it starts faster,
// and hands a call that runs the real agent to the agentvcr beside it.
// Where links are not allowed (or there is no agentvcr-standin), it is the
// agentvcr binary itself, a hard link or a copy.
function standIn(options) {
  if (!options || typeof options.cassettes !== "string" || options.cassettes === "") {
    throw new TypeError('standIn: give the cassette directory: standIn({ cassettes: "testdata/cassettes" })');
  }
  const mode = options.mode || process.env.AGENTVCR_MODE || "replay";
  if (!MODES.includes(mode)) {
    throw new TypeError(`standIn: mode ${JSON.stringify(mode)} is not one of ${MODES.join(", ")} (from ${options.mode ? "the mode option" : "AGENTVCR_MODE"})`);
  }
  const exe = options.binary ? path.resolve(options.binary) : binaryPath();
  const cassettes = path.resolve(options.cassettes);
  const dir = fs.mkdtempSync(path.join(fs.realpathSync(os.tmpdir()), "agentvcr-"));
  const env = { AGENTVCR_MODE: mode, AGENTVCR_CASSETTES: cassettes };
  const real = options.realAgent || process.env.AGENTVCR_REAL_AGENT;
  if (real) {
    // A path is made absolute here, where it was given; a bare name is
    // looked up in PATH by the stand-in, past itself.
    env.AGENTVCR_REAL_AGENT = /[\\/]/.test(real) ? path.resolve(real) : real;
  }
  if (options.runLog) env.AGENTVCR_RUN_LOG = path.resolve(options.runLog);
  const made = new Map();

  function bin(name) {
    if (typeof name !== "string" || !/^[A-Za-z0-9][A-Za-z0-9._-]*$/.test(name)) {
      throw new TypeError(`standIn: bin(${JSON.stringify(name)}): give an agent's program name, such as "claude"`);
    }
    if (made.has(name)) return made.get(name);
    const file = path.join(dir, process.platform === "win32" ? `${name}.exe` : name);
    place(exe, leanBeside(exe), file);
    made.set(name, file);
    return file;
  }

  return {
    cassettes,
    mode,
    dir,
    env,
    bin,
    // The PATH on which each name given to bin() is found first.
    get path() {
      return dir + path.delimiter + (process.env.PATH || "");
    },
    cleanup() {
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}

// leanBeside is the lean stand-in beside the agentvcr binary exe, or null.
function leanBeside(exe) {
  const lean = path.join(path.dirname(exe), process.platform === "win32" ? "agentvcr-standin.exe" : "agentvcr-standin");
  return fs.existsSync(lean) ? lean : null;
}

// place puts the stand-in at file: a symbolic link to lean (which finds
// exe beside the file it links to), else to exe, else a hard link or a
// copy of exe (Windows without the privilege for links; another volume).
function place(exe, lean, file) {
  if (process.platform !== "win32") {
    for (const target of lean ? [lean, exe] : [exe]) {
      try {
        fs.symlinkSync(target, file);
        return;
      } catch {}
    }
  }
  try {
    fs.linkSync(exe, file);
    return;
  } catch {}
  fs.copyFileSync(exe, file);
  fs.chmodSync(file, 0o755);
}

module.exports = { standIn, binaryPath, platformPackage };
