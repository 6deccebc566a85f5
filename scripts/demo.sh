#!/usr/bin/env bash
# make demo: record a run of the simulated agent in each output format, replay it
# byte for byte, inspect it, then check and normalise it. Everything lands in .demo/.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
bin=$root/bin
out=$root/.demo
rm -rf "$out" && mkdir -p "$out/work" "$out/cassettes"
cd "$out/work"
printf '# Demo project\n\nA tiny project the simulated agent reads.\n' > README.md

section() { printf '\n\033[1m== %s\033[0m\n' "$*"; }
prompt="Read README.md and write a summary to summary.txt"
# Long stream-json lines are clipped on screen (not in the cassettes).
clip() { cut -c1-"${DEMO_WIDTH:-150}"; }

for format in json stream-json text; do
	tape=$out/cassettes/$format.cassette
	section "record  agentvcr record -o .demo/cassettes/$format.cassette -- cursor-agent-sim --print --output-format $format"
	"$bin/agentvcr" record -o "$tape" -- "$bin/cursor-agent-sim" --print --output-format "$format" "$prompt" | clip
	section "replay  agentvcr replay .demo/cassettes/$format.cassette"
	"$bin/agentvcr" replay "$tape" | clip
	section "inspect agentvcr inspect .demo/cassettes/$format.cassette"
	"$bin/agentvcr" inspect "$tape"
done

if "$bin/agentvcr" help | grep -q '^  agentvcr validate'; then
	section "validate agentvcr validate .demo/cassettes/stream-json.cassette"
	"$bin/agentvcr" validate "$out/cassettes/stream-json.cassette" && echo "conforms to the output contract"
fi
if "$bin/agentvcr" help | grep -q '^  agentvcr normalize'; then
	section "normalize agentvcr normalize .demo/cassettes/json.cassette"
	"$bin/agentvcr" normalize "$out/cassettes/json.cassette" | fold -w "${DEMO_WIDTH:-150}"
fi

section "stand-in  cursor-agent --print --output-format json ..., answered from .demo/cassettes"
ln -sf "$bin/agentvcr" "$out/cursor-agent" # under this name agentvcr is the stand-in
AGENTVCR_CASSETTES=$out/cassettes AGENTVCR_CACHE=$out/cache \
	"$out/cursor-agent" --print --output-format json "$prompt" | clip
echo
echo "A call that was never recorded:"
AGENTVCR_CASSETTES=$out/cassettes AGENTVCR_CACHE=$out/cache \
	"$out/cursor-agent" --print --output-format json "Something else" || echo "(exit $?)"
printf '\nCassettes are in .demo/cassettes; open one in a pager: less .demo/cassettes/stream-json.cassette\n'
