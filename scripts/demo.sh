#!/usr/bin/env bash
# make demo: the main job on the built-in simulated agent (cursor-agent-sim), each
# claim shown, not told: record a run live, replay it byte for byte (digests
# compared), inspect and check it, answer a call through the cursor-agent
# stand-in, pass a golden test in plain go test, and report the drift of a
# re-recording by a "new build". Everything lands in .demo/.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
bin=$root/bin
out=$root/.demo
rm -rf "$out" && mkdir -p "$out/work" "$out/cassettes" "$out/before"
cd "$out/work"
printf '# Demo project\n\nA tiny project the simulated agent reads.\n' > README.md
export AGENTVCR_CACHE=$out/cache SIMAGENT_DELAY=${SIMAGENT_DELAY:-0.2}

section() { printf '\n\033[1m== %s\033[0m\n' "$*"; }
clip() { cut -c1-"${DEMO_WIDTH:-110}"; }
digest() { sha256sum | cut -c1-16; }
prompt="Read README.md and write a summary to summary.txt"
cassette=$out/cassettes/run.cassette

section "1. record: agentvcr record -o run.cassette -- cursor-agent-sim --print --output-format stream-json ..."
"$bin/agentvcr" record -o "$cassette" -- "$bin/cursor-agent-sim" --print --output-format stream-json "$prompt" \
	> "$out/live.out" 2> "$out/live.err"
head -n 3 "$out/live.out" | clip
echo "   ... $(($(wc -l < "$out/live.out") - 3)) more events, shown live as the agent printed them"
tail -n 1 "$out/live.err"

section "2. replay: agentvcr replay run.cassette, byte for byte"
"$bin/agentvcr" replay "$cassette" > "$out/replay.out" 2> "$out/replay.err"
echo "live stdout   sha256 $(digest < "$out/live.out")    replayed stdout sha256 $(digest < "$out/replay.out")"
cmp "$out/live.out" "$out/replay.out" && echo "cmp: identical"

section "3. inspect and validate"
"$bin/agentvcr" inspect "$cassette" | grep -E '^(argv|exit|stdout|events|tool calls|  (read|write)|redacted)' | clip
"$bin/agentvcr" validate "$cassette" && echo "validate: conforms to the stream-json contract"

section "4. the stand-in: code that shells out to cursor-agent, answered offline from the cassette"
ln -sf "$bin/agentvcr" "$out/cursor-agent" # under this name agentvcr is the stand-in
AGENTVCR_CASSETTES=$out/cassettes "$out/cursor-agent" --print --output-format stream-json "$prompt" | digest |
	sed 's/^/stand-in stdout sha256 /'
# A call never recorded: the whole message, since its end says how to record it.
AGENTVCR_CASSETTES=$out/cassettes "$out/cursor-agent" --print --output-format json "Something else" 2>&1 |
	fold -s -w "${DEMO_WIDTH:-110}" || true

section "5. a golden test in plain go test (examples/answer, package agentvcrtest)"
(cd "$root" && go test -count=1 ./examples/answer)

section "6. an agent upgrade: re-record with a new build, then agentvcr drift"
cp "$cassette" "$out/before/"
# The "new build": authenticated by a key from the environment, so it reports another
# apiKeySource. It runs on the project as it was, as the first build did.
mkdir -p "$out/work2" && cp README.md "$out/work2/" && cd "$out/work2"
CURSOR_API_KEY=demo-key-0123456789 "$bin/agentvcr" record --quiet -o "$cassette" -- \
	"$bin/cursor-agent-sim" --print --output-format stream-json "$prompt" > /dev/null
cd "$out/work"
"$bin/agentvcr" drift "$out/before" "$out/cassettes" | clip || true

section "7. a second agent: Claude Code's stream-json (the simulated agent under the name claude)"
ln -sf "$bin/cursor-agent-sim" "$out/claude-real/claude" 2>/dev/null || { mkdir -p "$out/claude-real" && ln -sf "$bin/cursor-agent-sim" "$out/claude-real/claude"; }
mkdir -p "$out/claude-cassettes" && ln -sf "$bin/agentvcr" "$out/claude"
AGENTVCR_CASSETTES=$out/claude-cassettes AGENTVCR_MODE=once AGENTVCR_REAL_AGENT=$out/claude-real/claude \
	"$out/claude" -p --output-format stream-json --verbose "$prompt" > /dev/null
claude_cassette=$(ls "$out"/claude-cassettes/*.cassette)
"$bin/agentvcr" validate "$claude_cassette" && echo "validate: conforms to Claude Code's stream-json contract"
"$bin/agentvcr" inspect "$claude_cassette" | grep -E '^(agent|tool calls|  (Read|Write|Edit|Bash) )' | clip

printf '\nThe cassette is plain text: less .demo/cassettes/run.cassette\n'
