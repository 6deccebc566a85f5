#!/bin/sh
# Re-record every cassette of the suite from a live agent.
#
#   scripts/record.sh                        the simulated agent, built into bin/
#   AGENT=cursor-agent scripts/record.sh     a real cursor-agent (PATH name or path)
#
# The suite's scripts are the manifest: each package with a testdata/cassettes
# directory runs its TestScript with AGENTVCR_MODE=record, so every call a
# script makes runs the live agent in that script's work directory, with its
# files, and overwrites the cassette it replays. Then scripts/update.sh
# refreshes the goldens. Scripts that pin AGENTVCR_MODE (the real-world
# transcripts, the stand-in's own tests) keep their cassettes.
set -eu
cd "$(dirname "$0")/.."

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT INT TERM

if [ -z "${AGENT:-}" ]; then
	go build -o bin/cursor-agent-sim ./cmd/cursor-agent-sim
	AGENT=$(pwd)/bin/cursor-agent-sim
	SIMAGENT_DELAY=${SIMAGENT_DELAY:-0} # no pauses between events: recording is quick
	export SIMAGENT_DELAY
fi
case $AGENT in
/*) ;;
*/*) AGENT=$(pwd)/$AGENT ;;
*) AGENT=$(command -v "$AGENT") || { echo "record.sh: $AGENT not found in PATH" >&2; exit 2; } ;;
esac
[ -x "$AGENT" ] || { echo "record.sh: $AGENT is not executable" >&2; exit 2; }

packages=$(find . -path '*/testdata/cassettes' -type d -not -path './.git/*' | sed 's#/testdata/cassettes$##' | sort)
echo "record.sh: recording with $AGENT in: $(echo $packages)"

touch "$tmp/start"
sleep 1 # cassettes written from now on are newer than the marker
status=0
# Packages with scripts re-record through their TestScript; packages tested
# with agentvcrtest alone, through all their tests.
scripted=$(for p in $packages; do [ -d "$p/testdata/script" ] && echo "$p"; done)
plain=$(for p in $packages; do [ -d "$p/testdata/script" ] || echo "$p"; done)
: >"$tmp/log"
if [ -n "$scripted" ]; then
	AGENTVCR_MODE=record AGENTVCR_REAL_AGENT=$AGENT AGENTVCR_UNREFERENCED=ignore \
		go test -count=1 -run '^TestScript$' $scripted >>"$tmp/log" 2>&1 || status=$?
fi
if [ -n "$plain" ]; then
	AGENTVCR_MODE=record AGENTVCR_REAL_AGENT=$AGENT AGENTVCR_UNREFERENCED=ignore \
		go test -count=1 $plain >>"$tmp/log" 2>&1 || status=$?
fi

# The stand-in's own failures (the agent would not start, a cassette could
# not be written) mean the recording failed; other failures are the scripts'
# assertions meeting new output, for update.sh and review.
if grep -qE '\(agentvcr stand-in\): |both recorded' "$tmp/log"; then
	grep -E '\(agentvcr stand-in\): |both recorded' "$tmp/log" | sort -u >&2
	echo "record.sh: recording failed (full log: go test output above)" >&2
	exit 1
fi
stale=$(find $(echo "$packages" | sed 's#$#/testdata/cassettes#') -name '*.cassette' -not -path '*/realworld/*' ! -newer "$tmp/start")
if [ -n "$stale" ]; then
	echo "record.sh: not re-recorded (no script made these calls, or they pin a mode):"
	echo "$stale" | sed 's/^/    /'
fi
if [ "$status" -ne 0 ]; then
	grep -E '^\s*--- FAIL: ' "$tmp/log" | sed 's/^ */    /' || true
	echo "record.sh: recorded; the scripts above fail against the new recordings."
	echo "record.sh: next: scripts/update.sh, then review the golden diffs."
else
	echo "record.sh: recorded; every script passes against the new recordings."
fi
