#!/usr/bin/env bash
# make realagents: the real agent CLIs (Claude Code, Gemini CLI, Qwen Code,
# Codex, OpenCode, Copilot CLI, Cline, Auggie), installed from npm, run offline against
# the project's fake model server (internal/testsupport/fakemodel, on loopback), each
# recorded twice by agentvcr in two working directories of different path
# lengths and homes; the two recordings must normalise to the same bytes with
# the default rules. Prints a table: agent, format, differing lines.
# REALAGENTS="opencode cline" drives some of them only. Cursor Agent is not
# on npm: its runs are the committed real-world transcripts.
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
packages="@anthropic-ai/claude-code@2.1.330 @qwen-code/qwen-code@0.24.4 @google/gemini-cli@0.61.0 @openai/codex@0.169.0
	opencode-ai@1.18.33 @github/copilot@1.0.102 cline@3.0.65 @augmentcode/auggie@0.36.0"
if ! (cd "$dir" && npm install --no-audit --no-fund --loglevel=error $packages >"$dir/npm.log" 2>&1); then
	echo "realagents: skipped: npm install failed (registry unreachable?); see $dir/npm.log"
	exit 0
fi
cd "$root"
go build -o "$dir/agentvcr" ./cmd/agentvcr
go build -o "$dir/fakemodel" ./internal/testsupport/fakemodel/cmd/fakemodel
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
	if [ "$agent" = opencode ]; then # a custom OpenAI-compatible provider on loopback
		mkdir -p "$home/.config/opencode"
		printf '{"$schema":"https://opencode.ai/config.json","autoupdate":false,"share":"disabled","model":"fake/fake-model","small_model":"fake/fake-model","provider":{"fake":{"npm":"@ai-sdk/openai-compatible","name":"Fake","options":{"baseURL":"%s/v1","apiKey":"sk-offline-0000"},"models":{"fake-model":{"name":"Fake Model","tool_call":true,"limit":{"context":128000,"output":8192}}}}}}\n' "$url" >"$home/.config/opencode/opencode.json"
	fi
	if [ "$agent" = cline ]; then # the provider, as cline auth writes it
		(cd "$work" && env HOME="$home" timeout 60 "$bin/cline" auth -p openai -k sk-offline-0000 -m fake-model -b "$url/v1" >/dev/null 2>&1) || true
	fi
	mkdir -p "$home/tmp"
	(cd "$work" && env HOME="$home" TMPDIR="$home/tmp" XDG_CONFIG_HOME="$home/.config" XDG_DATA_HOME="$home/.local/share" \
		XDG_CACHE_HOME="$home/.cache" XDG_STATE_HOME="$home/.local/state" NO_COLOR=1 timeout 180 "$@" >/dev/null 2>&1) || true
}

# record AGENT FORMAT N: run N of AGENT in FORMAT, recorded.
record() {
	local agent=$1 format=$2 n=$3 cassette=$dir/runs/$1-$2/run$3.cassette
	local common=("$dir/agentvcr" record --quiet -o "$cassette" --)
	case $agent in
	claude)
		local extra=() f=$format
		[ "$format" = stream-json ] && extra=(--verbose)
		[ "$format" = stream-json-partial ] && f=stream-json extra=(--verbose --include-partial-messages)
		run claude "$format" "$n" env ANTHROPIC_BASE_URL="$url" ANTHROPIC_API_KEY=sk-ant-offline-0000 \
			DISABLE_TELEMETRY=1 DISABLE_ERROR_REPORTING=1 DISABLE_AUTOUPDATER=1 CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1 \
			"${common[@]}" "$bin/claude" -p "List the files here" --output-format "$f" "${extra[@]}" --allowedTools Bash
		;;
	opencode)
		local json=()
		[ "$format" = json ] && json=(--format json)
		run opencode "$format" "$n" env OPENCODE_DISABLE_AUTOUPDATE=1 OPENCODE_DISABLE_MODELS_FETCH=1 OPENCODE_DISABLE_LSP_DOWNLOAD=1 \
			OPENCODE_DISABLE_SHARE=1 OPENCODE_DISABLE_DEFAULT_PLUGINS=1 OPENCODE_DISABLE_CLAUDE_CODE=1 \
			"${common[@]}" "$bin/opencode" run "${json[@]}" "List the files here"
		;;
	copilot)
		run copilot "$format" "$n" env COPILOT_HOME="$dir/runs/copilot-$format/home$n/.copilot" COPILOT_OFFLINE=true \
			COPILOT_PROVIDER_BASE_URL="$url/v1" COPILOT_PROVIDER_TYPE=openai COPILOT_PROVIDER_API_KEY=sk-offline-0000 \
			COPILOT_MODEL=fake-model COPILOT_AUTO_UPDATE=false GH_TOKEN= GITHUB_TOKEN= COPILOT_GITHUB_TOKEN= \
			"${common[@]}" "$bin/copilot" -p "List the files here" --output-format "$format" --allow-all-tools
		;;
	cline)
		local json=()
		[ "$format" = json ] && json=(--json)
		run cline "$format" "$n" env CLINE_SESSION_BACKEND_MODE=local CLINE_NO_AUTO_UPDATE=1 \
			"${common[@]}" "$bin/cline" "${json[@]}" "List the files here"
		;;
	auggie)
		local json=()
		[ "$format" = json ] && json=(--output-format json)
		run auggie "$format" "$n" env AUGMENT_SESSION_AUTH='{"accessToken":"offline-0000","tenantURL":"'"$url"'/","scopes":["email"]}' \
			"${common[@]}" "$bin/auggie" --print "${json[@]}" --permission launch-process:allow "List the files here"
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
printf '%-8s %-20s %-7s %s\n' agent format stdout stderr
status=0
# formats AGENT: the output formats a CLI has (json for OpenCode, Copilot and
# Cline is their JSONL stream).
formats() {
	case $1 in
	claude) echo text json stream-json stream-json-partial ;;
	codex) echo text stream-json ;; # codex exec has text and --json only
	opencode | copilot | cline | auggie) echo text json ;;
	*) echo text json stream-json ;;
	esac
}
agents=${REALAGENTS:-claude gemini qwen codex opencode copilot cline auggie}
for agent in $agents; do
	for format in $(formats "$agent"); do
		record "$agent" "$format" 1
		record "$agent" "$format" 2
		a=$dir/runs/$agent-$format/run1.cassette b=$dir/runs/$agent-$format/run2.cassette
		if [ ! -s "$a" ] || [ ! -s "$b" ]; then
			printf '%-8s %-20s %s\n' "$agent" "$format" "not recorded (see $dir/runs/$agent-$format)"
			status=1
			continue
		fi
		out=$(diff <("$dir/agentvcr" normalize "$a") <("$dir/agentvcr" normalize "$b") | grep -c '^<' || true)
		err=$(diff <("$dir/agentvcr" normalize --stderr "$a") <("$dir/agentvcr" normalize --stderr "$b") | grep -c '^<' || true)
		printf '%-8s %-20s %-7s %s\n' "$agent" "$format" "$out" "$err"
		[ "$out" = 0 ] || status=1
	done
done
exit $status
