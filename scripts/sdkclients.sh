#!/usr/bin/env bash
# make sdkclients: the official agent SDKs (Claude Agent SDK, Qwen Code SDK,
# Codex SDK), pinned in scripts/sdkclients/node/package.json and installed
# from npm, drive the real CLIs through the agentvcr stand-in: each scenario
# is recorded (AGENTVCR_MODE=record, the fake model on loopback), then
# replayed in fresh directories with the fake model down, and the messages
# the SDK handed the application are compared, normalised
# (scripts/sdkclients/node/normalise.mjs: ids, the working directory, home).
# A "changed prompt" replay must fail clearly: a miss, not a hang.
# Prints a table scenario -> ok/FAIL; exits 1 on a FAIL.
#
# Not part of make test: it needs npm and the registry (it skips, saying so,
# without them). SDKCLIENTS_DIR keeps the install (default .sdkclients),
# SDKCLIENTS="claude-oneshot qwen-oneshot" runs some scenarios only,
# SDKCLIENTS_TIMEOUT bounds each SDK run (seconds, default 90).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
dir=${SDKCLIENTS_DIR:-$root/.sdkclients}
limit=${SDKCLIENTS_TIMEOUT:-90}
mkdir -p "$dir"
dir=$(cd "$dir" && pwd) # the stand-in wants absolute paths
if ! command -v npm >/dev/null 2>&1 || ! command -v node >/dev/null 2>&1; then
	echo "sdkclients: skipped: node and npm are not installed"
	exit 0
fi
node_dir=$dir/node
mkdir -p "$node_dir"
cp "$root"/scripts/sdkclients/node/package.json "$root"/scripts/sdkclients/node/*.mjs "$node_dir"/
install=(install)
if [ -f "$root/scripts/sdkclients/node/package-lock.json" ]; then
	cp "$root/scripts/sdkclients/node/package-lock.json" "$node_dir"/
	install=(ci)
fi
if ! (cd "$node_dir" && npm "${install[@]}" --no-audit --no-fund --loglevel=error >"$dir/npm.log" 2>&1); then
	echo "sdkclients: skipped: npm ${install[*]} failed (registry unreachable?); see $dir/npm.log"
	exit 0
fi
cd "$root"
go build -o "$dir/agentvcr" ./cmd/agentvcr
go build -o "$dir/fakemodel" ./internal/testsupport/fakemodel/cmd/fakemodel
# The stand-in under each agent's name: what the SDK is told to spawn.
rm -rf "$dir/bin"
mkdir -p "$dir/bin"
for name in claude qwen codex; do ln -s "$dir/agentvcr" "$dir/bin/$name"; done
real=$node_dir/node_modules/.bin

rm -f "$dir/fakemodel.url"
"$dir/fakemodel" -log "$dir/fakemodel.log" >"$dir/fakemodel.url" &
server=$!
trap 'kill $server 2>/dev/null || true' EXIT
while [ ! -s "$dir/fakemodel.url" ]; do
	kill -0 $server 2>/dev/null || { echo "sdkclients: the fake model server did not start" >&2; exit 1; }
	read -r -t 0.1 _ <>"$dir/fakemodel.log" || true # wait a moment without a busy loop
done
url=$(head -n 1 "$dir/fakemodel.url")

# agent SCENARIO: the CLI a scenario's SDK spawns.
agent() {
	case $1 in
	claude-*) echo claude ;;
	qwen-*) echo qwen ;;
	codex-*) echo codex ;;
	esac
}

# sdk PHASE SCENARIO [VAR=VALUE...]: run the scenario's SDK through the
# stand-in, in a fresh working directory and home of PHASE's own (record or
# a replay), with the cassettes of the scenario and the variables given
# (SDKC_PROMPT, SDKC_DECISION: see run.mjs); the SDK's messages go to
# PHASE.jsonl. Returns the run's exit status (124: no end within the limit).
sdk() {
	local phase=$1 s=$2
	shift 2
	local runs=$dir/runs/$s name
	name=$(agent "$s")
	# Paths of different lengths in record and replay: relocation must not
	# depend on them.
	local base=$runs/$phase
	[ "$phase" != record ] && base=$runs/$phase.in-a-longer/directory
	rm -rf "$base"
	mkdir -p "$base/work" "$base/home/tmp" "$base/home/.codex" "$runs/cassettes"
	printf '# Demo\n\nA small project.\n' >"$base/work/README.md"
	printf 'model = "gpt-5-codex"\nmodel_provider = "fake"\n[model_providers.fake]\nname = "fake"\nbase_url = "%s/v1"\nenv_key = "OPENAI_API_KEY"\nwire_api = "responses"\nsupports_websockets = false\n' "$url" >"$base/home/.codex/config.toml"
	local mode=replay
	[ "$phase" = record ] && mode=record
	local status=0
	# The application runs in the same directory every time, as a test
	# suite in its project; the agent works in the phase's own directory,
	# elsewhere: Codex is told it with --cd, the others by the SDK's cwd.
	mkdir -p "$runs/app"
	(cd "$runs/app" && env HOME="$base/home" TMPDIR="$base/home/tmp" XDG_CONFIG_HOME="$base/home/.config" \
		XDG_DATA_HOME="$base/home/.local/share" XDG_CACHE_HOME="$base/home/.cache" XDG_STATE_HOME="$base/home/.local/state" \
		NO_COLOR=1 AGENTVCR_MODE=$mode AGENTVCR_CASSETTES="$runs/cassettes" AGENTVCR_REAL_AGENT="$real/$name" \
		AGENTVCR_RUN_LOG="$runs/$phase.runlog" SDKC_EXE="$dir/bin/$name" SDKC_WORK="$base/work" \
		ANTHROPIC_BASE_URL="$url" ANTHROPIC_API_KEY=sk-ant-offline-0000 DISABLE_TELEMETRY=1 DISABLE_ERROR_REPORTING=1 \
		DISABLE_AUTOUPDATER=1 CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1 \
		OPENAI_BASE_URL="$url/v1" OPENAI_API_KEY=sk-offline-0000 OPENAI_MODEL=qwen3-coder CODEX_HOME="$base/home/.codex" \
		"$@" timeout -k 5 "$limit" node "$node_dir/run.mjs" "$s" >"$runs/$phase.jsonl" 2>"$runs/$phase.stderr") || status=$?
	(cd "$base" && env HOME="$base/home" SDKC_WORK="$base/work" node "$node_dir/normalise.mjs" "$runs/$phase.jsonl" >"$runs/$phase.norm")
	return $status
}

# first FILE FIELD: the first value of FIELD in a file of JSON lines, one
# line of at most 300 characters.
first() {
	node -e 'const [f, k] = process.argv.slice(1);
for (const l of require("fs").readFileSync(f, "utf8").split("\n")) {
  try { const v = JSON.parse(l)[k]; if (v) { console.log(String(v).replace(/\s+/g, " ").slice(0, 300)); break } } catch {}
}' "$1" "$2"
}

# why PHASE SCENARIO STATUS: one short reason a run failed.
why() {
	local runs=$dir/runs/$2
	if [ "$3" = 124 ] || [ "$3" = 137 ]; then
		echo "$1 hung: no end within ${limit}s"
	elif [ -s "$runs/$1.runlog" ] && grep -q '"error"' "$runs/$1.runlog"; then
		echo "$1: stand-in: $(first "$runs/$1.runlog" error)"
	elif grep -q '"app.error"' "$runs/$1.jsonl"; then
		echo "$1: SDK: $(first "$runs/$1.jsonl" message)"
	else
		echo "$1 exited $3 (see $runs/$1.stderr)"
	fi
}

scenarios=${SDKCLIENTS:-claude-oneshot claude-twoturns claude-allow claude-deny qwen-oneshot codex-workdir}
declare -A recorded
echo "recording through the stand-in (fake model on $url) ..."
for s in $scenarios; do
	rm -rf "$dir/runs/$s"
	st=0
	sdk record "$s" || st=$?
	recorded[$s]=$st
done
# Offline from here: nothing answers on the model's port.
kill $server 2>/dev/null || true
wait $server 2>/dev/null || true

status=0
printf '%-16s %-5s %s\n' scenario ok detail
for s in $scenarios; do
	runs=$dir/runs/$s
	if [ "${recorded[$s]}" != 0 ]; then
		printf '%-16s %-5s %s\n' "$s" FAIL "$(why record "$s" "${recorded[$s]}")"
		status=1
		continue
	fi
	if ! grep -q '"type":"\(result\|turn.completed\)"' "$runs/record.jsonl"; then
		printf '%-16s %-5s %s\n' "$s" FAIL "record: the SDK got no result (see $runs/record.jsonl)"
		status=1
		continue
	fi
	# Two replays, in two fresh directories: run after run, the same.
	bad=
	for phase in replay replay2; do
		st=0
		sdk $phase "$s" || st=$?
		if [ "$st" != 0 ]; then
			bad="$(why $phase "$s" "$st")"
		elif ! node "$node_dir/compare.mjs" "$runs/record.norm" "$runs/$phase.norm" >"$runs/$phase.diff" 2>&1; then
			bad="$phase differs from record: $(paste -sd';' "$runs/$phase.diff" | cut -c1-400) (all: diff $runs/record.norm $runs/$phase.norm)"
		fi
		[ -n "$bad" ] && break
	done
	if [ -n "$bad" ]; then
		printf '%-16s %-5s %s\n' "$s" FAIL "$bad"
		status=1
	else
		printf '%-16s %-5s %s\n' "$s" ok "$(grep -c . "$runs/record.norm") messages, replayed alike twice with the model down"
	fi
done

# changed NAME SCENARIO VAR=VALUE: a replay of SCENARIO in which the
# application says something the recording does not have must be a clear
# miss, quickly: the SDK fails, and the stand-in logged exit 2.
changed() {
	local check=$1 s=$2 runs=$dir/runs/$2 st=0
	[[ " $scenarios " == *" $s "* ]] && [ "${recorded[$s]}" = 0 ] || return 0
	sdk "$check" "$s" "$3" || st=$?
	if [ "$st" = 0 ]; then
		printf '%-16s %-5s %s\n' "$check" FAIL "replayed what was never recorded ($3; see $runs/$check.jsonl)"
		status=1
	elif [ "$st" = 124 ] || [ "$st" = 137 ]; then
		printf '%-16s %-5s %s\n' "$check" FAIL "hung instead of a miss (no end within ${limit}s)"
		status=1
	elif ! grep -q '"code":2' "$runs/$check.runlog" 2>/dev/null; then
		printf '%-16s %-5s %s\n' "$check" FAIL "failed, but the stand-in logged no miss: $(why "$check" "$s" "$st")"
		status=1
	else
		printf '%-16s %-5s %s\n' "$check" ok "a miss: $(why "$check" "$s" "$st" | cut -d' ' -f2-)"
	fi
}
changed changed-prompt claude-oneshot SDKC_PROMPT="List the files there"
changed changed-answer claude-allow SDKC_DECISION=deny
exit $status
