#!/usr/bin/env bash
# make realagents: the real agent CLIs, installed from npm, run offline against
# the project's fake model server (internal/fakemodel, on loopback), each
# recorded twice by agentvcr in two working directories of different path
# lengths and homes; the two recordings must normalise to the same bytes with
# the default rules. Prints a table: agent, format, differing lines.
#
# Not part of make test: it needs the npm registry (it skips, saying so, when
# npm or the registry cannot be had). REALAGENTS_DIR keeps the install.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
dir=${REALAGENTS_DIR:-$root/.realagents}
mkdir -p "$dir"
if ! command -v npm >/dev/null 2>&1; then
	echo "realagents: skipped: npm is not installed"
	exit 0
fi
# Pinned: a new release is a deliberate upgrade (re-run this and look at the table).
packages="@anthropic-ai/claude-code@2.1.330 @qwen-code/qwen-code@0.24.4 @google/gemini-cli@0.61.0 @openai/codex@0.169.0"
if ! (cd "$dir" && npm install --no-audit --no-fund --loglevel=error $packages >"$dir/npm.log" 2>&1); then
	echo "realagents: skipped: npm install failed (registry unreachable?); see $dir/npm.log"
	exit 0
fi
cd "$root"
go build -o "$dir/agentvcr" ./cmd/agentvcr
go build -o "$dir/fakemodel" ./internal/fakemodel/cmd/fakemodel
rm -f "$dir/fakemodel.url"
"$dir/fakemodel" -log "$dir/fakemodel.log" >"$dir/fakemodel.url" &
server=$!
trap 'kill $server 2>/dev/null || true' EXIT
while [ ! -s "$dir/fakemodel.url" ]; do
	kill -0 $server 2>/dev/null || { echo "realagents: the fake model server did not start" >&2; exit 1; }
	read -r -t 0.1 _ <>"$dir/fakemodel.log" || true # wait a moment without a busy loop
done
url=$(head -n 1 "$dir/fakemodel.url")
bin=$dir/node_modules/.bin

# run AGENT FORMAT N ARGS...: record run N of AGENT in its own directory and home.
run() {
	local agent=$1 format=$2 n=$3
	shift 3
	local work=$dir/runs/$agent-$format/$n home=$dir/runs/$agent-$format/home$n
	[ "$n" = 2 ] && work=$dir/runs/$agent-$format/a.much-longer/path.name/work$n
	rm -rf "$work" "$home"
	mkdir -p "$work" "$home"
	printf '# Demo\n\nA small project.\n' >"$work/README.md"
	if [ "$agent" = gemini ]; then # an API key as its auth, no telemetry, no update check
		mkdir -p "$home/.gemini"
		printf '%s\n' '{"security":{"auth":{"selectedType":"gemini-api-key"}},"selectedAuthType":"gemini-api-key","telemetry":{"enabled":false},"general":{"disableAutoUpdate":true}}' >"$home/.gemini/settings.json"
	fi
	if [ "$agent" = codex ]; then # a model provider on loopback, over HTTPS-less SSE, no websockets
		mkdir -p "$home/.codex"
		printf 'model = "gpt-5-codex"\nmodel_provider = "fake"\n[model_providers.fake]\nname = "fake"\nbase_url = "%s/v1"\nenv_key = "OPENAI_API_KEY"\nwire_api = "responses"\nsupports_websockets = false\n' "$url" >"$home/.codex/config.toml"
	fi
	(cd "$work" && env HOME="$home" "$@" >/dev/null 2>&1) || true
}

# record AGENT FORMAT N: run N of AGENT in FORMAT, recorded.
record() {
	local agent=$1 format=$2 n=$3 tape=$dir/runs/$1-$2/run$3.cassette
	local common=("$dir/agentvcr" record --quiet -o "$tape" --)
	case $agent in
	claude)
		local extra=()
		[ "$format" = stream-json ] && extra=(--verbose)
		run claude "$format" "$n" env ANTHROPIC_BASE_URL="$url" ANTHROPIC_API_KEY=sk-ant-offline-0000 \
			DISABLE_TELEMETRY=1 DISABLE_ERROR_REPORTING=1 DISABLE_AUTOUPDATER=1 CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1 \
			"${common[@]}" "$bin/claude" -p "List the files here" --output-format "$format" "${extra[@]}" --allowedTools Bash
		;;
	codex)
		local json=()
		[ "$format" = stream-json ] && json=(--json)
		run codex "$format" "$n" env OPENAI_API_KEY=sk-offline-0000 CODEX_HOME="$dir/runs/codex-$format/home$n/.codex" \
			"${common[@]}" "$bin/codex" exec "${json[@]}" --skip-git-repo-check "List the files here"
		;;
	gemini)
		run gemini "$format" "$n" env GOOGLE_GEMINI_BASE_URL="$url" GEMINI_API_KEY=offline-key-0000 GEMINI_CLI_TRUST_WORKSPACE=true \
			"${common[@]}" "$bin/gemini" -p "List the files here" --output-format "$format"
		;;
	qwen)
		run qwen "$format" "$n" env OPENAI_BASE_URL="$url/v1" OPENAI_API_KEY=sk-offline-0000 OPENAI_MODEL=qwen3-coder \
			"${common[@]}" "$bin/qwen" "List the files here" --output-format "$format"
		;;
	esac
}

echo "differing lines between the two runs, normalised (stdout fails the check; stderr is shown:"
echo "a CLI's own log lines may come in another order)"
printf '%-8s %-12s %-7s %s\n' agent format stdout stderr
status=0
for agent in claude gemini qwen codex; do
	for format in text json stream-json; do
		[ "$agent" = codex ] && [ "$format" = json ] && continue # codex exec has text and --json only
		record "$agent" "$format" 1
		record "$agent" "$format" 2
		a=$dir/runs/$agent-$format/run1.cassette b=$dir/runs/$agent-$format/run2.cassette
		if [ ! -s "$a" ] || [ ! -s "$b" ]; then
			printf '%-8s %-12s %s\n' "$agent" "$format" "not recorded (see $dir/runs/$agent-$format)"
			status=1
			continue
		fi
		out=$(diff <("$dir/agentvcr" normalize "$a") <("$dir/agentvcr" normalize "$b") | grep -c '^<' || true)
		err=$(diff <("$dir/agentvcr" normalize --stderr "$a") <("$dir/agentvcr" normalize --stderr "$b") | grep -c '^<' || true)
		printf '%-8s %-12s %-7s %s\n' "$agent" "$format" "$out" "$err"
		[ "$out" = 0 ] || status=1
	done
done
exit $status
