#!/usr/bin/env bash
# make acpclients: the ACP agents (Gemini CLI, OpenCode, Qwen Code, Copilot
# CLI, Auggie) and codex app-server, installed from npm, driven by a Go ACP
# client (internal/testsupport/acpclient/cmd/acpdrive) through the stand-in: each
# scenario (hello, read a file, a permissioned shell command, a write, two
# prompts in one session) is recorded against the project's fake model
# (internal/testsupport/fakemodel, on loopback), then replayed with the fake model
# down, in a fresh directory. The client's summary of the session (each
# turn's stop reason, text, update kinds, the agent's requests, the files
# left in the directory) must be the same. Prints a table: agent, scenario,
# live, replayed.
# ACPCLIENTS="gemini opencode" drives some of them only.
#
# Not part of make test: it needs the npm registry (it skips, saying so, when
# npm or the registry cannot be had). ACPCLIENTS_DIR keeps the install.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
dir=${ACPCLIENTS_DIR:-$root/.acpclients}
mkdir -p "$dir"
if ! command -v npm >/dev/null 2>&1; then
	echo "acpclients: skipped: npm is not installed"
	exit 0
fi
# Pinned as scripts/realagents.sh pins them.
packages="@google/gemini-cli@0.61.0 opencode-ai@1.18.33 @qwen-code/qwen-code@0.24.4 @github/copilot@1.0.102
	@augmentcode/auggie@0.36.0 @openai/codex@0.169.0"
[ -f "$dir/package.json" ] || echo '{"private":true}' >"$dir/package.json" # else npm installs where a parent's is
if ! (cd "$dir" && npm install --no-audit --no-fund --loglevel=error $packages >"$dir/npm.log" 2>&1); then
	echo "acpclients: skipped: npm install failed (registry unreachable?); see $dir/npm.log"
	exit 0
fi
cd "$root"
go build -o "$dir/agentvcr" ./cmd/agentvcr
go build -o "$dir/fakemodel" ./internal/testsupport/fakemodel/cmd/fakemodel
go build -o "$dir/acpdrive" ./internal/testsupport/acpclient/cmd/acpdrive
real=$dir/node_modules/.bin
cassettes=$dir/cassettes
rm -rf "$cassettes" "$dir/runs"
mkdir -p "$cassettes" "$dir/bin"
for b in gemini opencode qwen copilot auggie codex; do # the stand-in, under each agent's name
	ln -sf "$dir/agentvcr" "$dir/bin/$b"
done

server=
start_model() {
	rm -f "$dir/fakemodel.url"
	"$dir/fakemodel" -log "$dir/fakemodel.log" >"$dir/fakemodel.url" &
	server=$!
	while [ ! -s "$dir/fakemodel.url" ]; do
		kill -0 $server 2>/dev/null || { echo "acpclients: the fake model server did not start" >&2; exit 1; }
		read -r -t 0.1 _ <>"$dir/fakemodel.log" || true # wait a moment without a busy loop
	done
	url=$(head -n 1 "$dir/fakemodel.url")
}
stop_model() {
	[ -n "$server" ] && kill $server 2>/dev/null && wait $server 2>/dev/null || true
	server=
}
trap stop_model EXIT

# session AGENT SCENARIO MODE: one session of AGENT through the stand-in in
# MODE (record or replay), in a directory and home of its own; the client's
# summary goes to runs/AGENT-SCENARIO.MODE.
session() {
	local agent=$1 scenario=$2 mode=$3
	local run=$dir/runs/$agent-$scenario/$mode home work proto=acp extra=() envs=() argv=()
	home=$run/home
	work=$run/work
	[ "$mode" = replay ] && work=$run/a.longer/path/work # another directory, of another length
	# One cassette directory per agent: its five sessions share their argv,
	# and a replay narrows them message by message.
	mkdir -p "$home/tmp" "$work" "$cassettes/$agent"
	case $agent in
	gemini)
		mkdir -p "$home/.gemini"
		printf '%s\n' '{"security":{"auth":{"selectedType":"gemini-api-key"}},"selectedAuthType":"gemini-api-key","telemetry":{"enabled":false},"general":{"disableAutoUpdate":true}}' >"$home/.gemini/settings.json"
		envs=(GOOGLE_GEMINI_BASE_URL="$url" GEMINI_API_KEY=offline-key-0000 GEMINI_CLI_TRUST_WORKSPACE=true)
		argv=(gemini --experimental-acp)
		[ "$scenario" = write ] && extra=(-draft) # it writes onto an existing file only
		;;
	opencode)
		mkdir -p "$home/.config/opencode"
		printf '{"$schema":"https://opencode.ai/config.json","autoupdate":false,"share":"disabled","model":"fake/fake-model","small_model":"fake/fake-model","provider":{"fake":{"npm":"@ai-sdk/openai-compatible","name":"Fake","options":{"baseURL":"%s/v1","apiKey":"sk-offline-0000"},"models":{"fake-model":{"name":"Fake Model","tool_call":true,"limit":{"context":128000,"output":8192}}}}}}\n' "$url" >"$home/.config/opencode/opencode.json"
		envs=(OPENCODE_DISABLE_AUTOUPDATE=1 OPENCODE_DISABLE_MODELS_FETCH=1 OPENCODE_DISABLE_LSP_DOWNLOAD=1 OPENCODE_DISABLE_SHARE=1
			OPENCODE_DISABLE_DEFAULT_PLUGINS=1 OPENCODE_DISABLE_CLAUDE_CODE=1)
		argv=(opencode acp)
		;;
	qwen)
		envs=(OPENAI_BASE_URL="$url/v1" OPENAI_API_KEY=sk-offline-0000 OPENAI_MODEL=qwen3-coder)
		argv=(qwen --acp)
		;;
	copilot)
		envs=(COPILOT_HOME="$home/.copilot" COPILOT_OFFLINE=true COPILOT_PROVIDER_BASE_URL="$url/v1" COPILOT_PROVIDER_TYPE=openai
			COPILOT_PROVIDER_API_KEY=sk-offline-0000 COPILOT_MODEL=fake-model COPILOT_AUTO_UPDATE=false GH_TOKEN= GITHUB_TOKEN= COPILOT_GITHUB_TOKEN=)
		argv=(copilot --acp --stdio)
		;;
	auggie)
		envs=(AUGMENT_SESSION_AUTH='{"accessToken":"offline-0000","tenantURL":"'"$url"'/","scopes":["email"]}')
		argv=(auggie --acp)
		;;
	codex)
		mkdir -p "$home/.codex"
		printf 'model = "gpt-5-codex"\nmodel_provider = "fake"\n[model_providers.fake]\nname = "fake"\nbase_url = "%s/v1"\nenv_key = "OPENAI_API_KEY"\nwire_api = "responses"\nsupports_websockets = false\n' "$url" >"$home/.codex/config.toml"
		envs=(OPENAI_API_KEY=sk-offline-0000 CODEX_HOME="$home/.codex")
		argv=(codex app-server)
		proto=codex
		;;
	esac
	(cd "$work" && env PATH="$dir/bin:$PATH" HOME="$home" TMPDIR="$home/tmp" XDG_CONFIG_HOME="$home/.config" XDG_DATA_HOME="$home/.local/share" \
		XDG_CACHE_HOME="$home/.cache" XDG_STATE_HOME="$home/.local/state" NO_COLOR=1 \
		AGENTVCR_MODE="$mode" AGENTVCR_CASSETTES="$cassettes/$agent" AGENTVCR_REAL_AGENT="$real/${argv[0]}" "${envs[@]}" \
		timeout 240 "$dir/acpdrive" -protocol $proto -scenario "$scenario" -dir "$work" -timeout 180s "${extra[@]}" -- "${argv[@]}" \
		>"$dir/runs/$agent-$scenario.$mode" 2>"$dir/runs/$agent-$scenario.$mode.err") || true
}

agents=${ACPCLIENTS:-gemini opencode qwen copilot auggie codex}
scenarios="hello read shell write two"
start_model
for agent in $agents; do
	for scenario in $scenarios; do
		session "$agent" "$scenario" record
	done
done
stop_model # replays are offline: nothing answers on the model's port
url=http://127.0.0.1:9
status=0
printf '%-9s %-7s %-10s %s\n' agent scenario live replayed
for agent in $agents; do
	for scenario in $scenarios; do
		session "$agent" "$scenario" replay
		rec=$dir/runs/$agent-$scenario.record rep=$dir/runs/$agent-$scenario.replay live=failed replayed=failed
		[ -s "$rec" ] && live=ok
		if [ -s "$rep" ]; then
			replayed=different
			cmp -s "$rec" "$rep" && replayed=same
		fi
		printf '%-9s %-7s %-10s %s\n' "$agent" "$scenario" "$live" "$replayed"
		[ "$live" = ok ] && [ "$replayed" = same ] || status=1
	done
done
[ $status = 0 ] || echo "see $dir/runs/AGENT-SCENARIO.{record,replay}{,.err}"
exit $status
