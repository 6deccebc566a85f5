// compare.mjs A B: compares two files of normalised SDK messages (as
// normalise.mjs prints them) and prints nothing when they are equal, else
// one line per differing message (at most 5): its number, type and the
// first field that differs, with both values. Exits 1 when they differ.
import { readFileSync } from "node:fs";

const load = (f) => readFileSync(f, "utf8").split("\n").filter((l) => l.trim()).map((l) => JSON.parse(l));
const [a, b] = process.argv.slice(2).map(load);
const show = (v) => (v === undefined ? "(absent)" : JSON.stringify(v).slice(0, 120));

// firstDiff returns the path of the first difference between x and y, in
// x's key order, then y's extra keys.
function firstDiff(x, y, path) {
  if (typeof x !== typeof y || Array.isArray(x) !== Array.isArray(y) || x === null || y === null || typeof x !== "object") {
    return JSON.stringify(x) === JSON.stringify(y) ? null : { path, x, y };
  }
  const keys = Array.isArray(x)
    ? [...Array(Math.max(x.length, y.length)).keys()]
    : [...new Set([...Object.keys(x), ...Object.keys(y)])];
  for (const k of keys) {
    const d = firstDiff(x[k], y[k], Array.isArray(x) ? `${path}[${k}]` : path ? `${path}.${k}` : k);
    if (d) return d;
  }
  return null;
}

let shown = 0;
for (let i = 0; i < Math.max(a.length, b.length) && shown < 5; i++) {
  const d = firstDiff(a[i], b[i], "");
  if (!d) continue;
  shown++;
  const type = [(a[i] ?? b[i]).type, (a[i] ?? b[i]).subtype].filter(Boolean).join("/");
  if (a[i] === undefined || b[i] === undefined) {
    console.log(`message ${i + 1} (${type}): only in ${a[i] === undefined ? "the replay" : "the recording"}`);
  } else {
    console.log(`message ${i + 1} (${type}): ${d.path || "(whole)"}: recorded ${show(d.x)}, replayed ${show(d.y)}`);
  }
}
process.exit(shown ? 1 : 0);
