// normalise.mjs FILE: prints the SDK messages of FILE (one JSON object a
// line, as run.mjs writes them) with what differs between a recording and
// its replay by design taken out, so the two can be compared as text:
// the values of id fields (session_id, request_id, uuid: the client makes
// some, and the stand-in gives the client its own back), numbered by first
// appearance and replaced wherever else they appear, so that which messages
// share an id still counts; the working
// directory and home of the run ($SDKC_WORK and $HOME, fresh directories
// each time). Everything else must be equal, byte for byte.
import { readFileSync } from "node:fs";

const volatile = new Set(["session_id", "request_id", "uuid"]);
const ids = new Map();
const idOf = (v) => {
  if (!ids.has(v)) ids.set(v, `<id${ids.size + 1}>`);
  return ids.get(v);
};
const work = process.env.SDKC_WORK;
const home = process.env.HOME;

// collect numbers the values of id fields by first appearance.
function collect(v) {
  if (Array.isArray(v)) return v.forEach(collect);
  if (v && typeof v === "object") {
    for (const [k, x] of Object.entries(v)) {
      if (volatile.has(k) && typeof x === "string") idOf(x);
      collect(x);
    }
  }
}

// scrub replaces ids wherever they appear (a Qwen init's uuid is its
// session id) and the run's directories.
function scrub(v) {
  if (Array.isArray(v)) return v.map(scrub);
  if (v && typeof v === "object") {
    const out = {};
    for (const [k, x] of Object.entries(v)) out[k] = scrub(x);
    return out;
  }
  if (typeof v === "string") {
    if (ids.has(v)) return ids.get(v);
    let s = v;
    if (work) s = s.split(work).join("$WORK");
    if (home) s = s.split(home).join("$HOME");
    return s;
  }
  return v;
}

const messages = [];
for (const line of readFileSync(process.argv[2], "utf8").split("\n")) {
  if (!line.trim()) continue;
  try {
    messages.push(JSON.parse(line));
  } catch {
    messages.push(`not JSON: ${line}`);
  }
}
messages.forEach(collect);
for (const m of messages) console.log(JSON.stringify(scrub(m)));
