#!/usr/bin/env bash
# make upgrades: an agent upgrade tested offline, for Claude Code, Codex,
# Gemini CLI, Qwen Code and OpenCode. An older and a newer pinned build of
# each are installed from npm; each scenario (hello, read a file, run a
# command, write a file) is recorded with the older build through
# `agentvcr record` with the fake model (internal/testsupport/fakemodel) on loopback as
# the upstream, the model's exchanges in the cassette. Then, the fake model
# down:
#   older→older  `agentvcr rerun` with the older build: the same normalised
#                output and the same file changes;
#   older→newer  `agentvcr rerun` with the newer build: the same final answer
#                and file changes, or a miss or drift report naming what the
#                new build changed (`agentvcr drift` of the two cassettes);
# and the checks: no key in any cassette; a changed tool result (notes.txt
# edited before the rerun) is a clear miss in seconds, not a hang;
# `AGENTVCR_MODE=rerun go test` in a scratch module shows the newer build's
# changes as pending goldens.
# Prints a table (agent, scenario, result, tiers, rerun seconds) and a last
# line "N passed, N failed"; exits 1 on a failure.
#
# Not part of make test: it needs npm and the registry (it skips, saying so,
# without them). UPGRADES_DIR keeps the installs and runs (default
# .upgrades), UPGRADES="claude codex" drives some agents only,
# UPGRADES_SCENARIOS="hello read" some scenarios, UPGRADES_TIMEOUT bounds
# each run of an agent (seconds, default 300: the CLIs start slowly on a
# loaded machine).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
dir=${UPGRADES_DIR:-$root/.upgrades}
limit=${UPGRADES_TIMEOUT:-300}
mkdir -p "$dir"
dir=$(cd "$dir" && pwd)
if ! command -v npm >/dev/null 2>&1 || ! command -v node >/dev/null 2>&1; then
	echo "upgrades: skipped: node and npm are not installed"
	exit 0
fi

# Pinned: AGENT PACKAGE OLDER NEWER (the builds docs/upgrades.md measured).
pins="claude @anthropic-ai/claude-code 2.1.300 2.1.330
codex @openai/codex 0.160.0 0.169.0
gemini @google/gemini-cli 0.56.0 0.61.0
qwen @qwen-code/qwen-code 0.15.6 0.24.4
opencode opencode-ai 1.17.18 1.18.33"
agents=${UPGRADES:-claude codex gemini qwen opencode}
scenarios=${UPGRADES_SCENARIOS:-hello read shell write}

# bin AGENT VERSION: the agent's program in its own install.
bin() { echo "$dir/npm/$1-$2/node_modules/.bin/$1"; }

while read -r agent pkg older newer; do
	[[ " $agents " == *" $agent "* ]] || continue
	for v in "$older" "$newer"; do
		[ -x "$(bin "$agent" "$v")" ] && continue
		mkdir -p "$dir/npm/$agent-$v"
		[ -f "$dir/npm/$agent-$v/package.json" ] || echo '{"private":true}' >"$dir/npm/$agent-$v/package.json"
		if ! (cd "$dir/npm/$agent-$v" && npm install --no-audit --no-fund --loglevel=error "$pkg@$v" >npm.log 2>&1); then
			echo "upgrades: skipped: npm install $pkg@$v failed (registry unreachable?); see $dir/npm/$agent-$v/npm.log"
			exit 0
		fi
	done
done <<<"$pins"
version() { awk -v a="$1" -v k="$2" '$1 == a { print (k == "older" ? $3 : $4) }' <<<"$pins"; }

cd "$root"
go build -o "$dir/agentvcr" ./cmd/agentvcr
go build -o "$dir/fakemodel" ./internal/testsupport/fakemodel/cmd/fakemodel
avcr=$dir/agentvcr
rm -f "$dir/fakemodel.url"
"$dir/fakemodel" -log "$dir/fakemodel.log" >"$dir/fakemodel.url" &
server=$!
trap 'kill $server 2>/dev/null || true' EXIT
while [ ! -s "$dir/fakemodel.url" ]; do
	kill -0 $server 2>/dev/null || { echo "upgrades: the fake model server did not start" >&2; exit 1; }
	read -r -t 0.1 _ <>"$dir/fakemodel.log" || true # wait a moment without a busy loop
done
url=$(head -n 1 "$dir/fakemodel.url")

# The keys the recordings run with: none may reach a cassette.
keys=(sk-ant-upgrades-0000secret sk-upgrades-0000secret upgrades-gemini-0000secret)

prompt() {
	case $1 in
	hello) echo "Reply with exactly: hello" ;;
	read) echo "Read the file $2/notes.txt and tell me what it says." ;;
	shell) echo 'Please run the command `mkdir -p out && echo generated > out/result.txt` and report.' ;;
	write) echo "Write the text \`hello world\` to the file $2/greeting.txt" ;;
	esac
}

# fresh AGENT SCENARIO: the scenario's working directory and home, made
# anew at the same paths for every run (the recorded prompt names them):
# notes.txt in the work, the agent's settings in the home.
fresh() {
	local base=$dir/runs/$1/$2
	rm -rf "$base/work" "$base/home"
	mkdir -p "$base/work" "$base/home/tmp"
	printf 'The secret word is PINEAPPLE.\n' >"$base/work/notes.txt"
	case $1 in
	gemini) # an API key as its auth, no telemetry, no update check
		mkdir -p "$base/home/.gemini"
		printf '%s\n' '{"security":{"auth":{"selectedType":"gemini-api-key"}},"selectedAuthType":"gemini-api-key","telemetry":{"enabled":false},"general":{"disableAutoUpdate":true}}' >"$base/home/.gemini/settings.json"
		;;
	codex) # the built-in provider, its base URL the fake model's; a model
		# Codex knows (with the built-in default it offers no tools)
		mkdir -p "$base/home/.codex"
		printf 'model = "gpt-5-codex"\nopenai_base_url = "%s/v1"\n' "$url" >"$base/home/.codex/config.toml"
		;;
	opencode) # a custom OpenAI-compatible provider, the fake model its base URL
		mkdir -p "$base/home/.config/opencode"
		printf '{"$schema":"https://opencode.ai/config.json","autoupdate":false,"share":"disabled","model":"fake/fake-model","provider":{"fake":{"npm":"@ai-sdk/openai-compatible","name":"Fake","options":{"baseURL":"%s/v1","apiKey":"{env:FAKE_API_KEY}"},"models":{"fake-model":{"name":"Fake Model","tool_call":true,"limit":{"context":128000,"output":8192}}}}}}\n' "$url" >"$base/home/.config/opencode/opencode.json"
		;;
	esac
}

# setenv AGENT SCENARIO: ENVV, the environment of every run of the agent:
# its home, no telemetry or update checks, the fake model its upstream.
setenv() {
	local home=$dir/runs/$1/$2/home
	ENVV=(HOME="$home" TMPDIR="$home/tmp" XDG_CONFIG_HOME="$home/.config" XDG_DATA_HOME="$home/.local/share"
		XDG_CACHE_HOME="$home/.cache" XDG_STATE_HOME="$home/.local/state" NO_COLOR=1)
	case $1 in
	claude) ENVV+=(ANTHROPIC_BASE_URL="$url" ANTHROPIC_API_KEY="${keys[0]}" DISABLE_TELEMETRY=1 DISABLE_ERROR_REPORTING=1
		DISABLE_AUTOUPDATER=1 CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1 IS_SANDBOX=1) ;;
	codex) ENVV+=(OPENAI_API_KEY="${keys[1]}" CODEX_HOME="$home/.codex") ;;
	gemini) ENVV+=(GOOGLE_GEMINI_BASE_URL="$url" GEMINI_API_KEY="${keys[2]}" GEMINI_CLI_TRUST_WORKSPACE=true) ;;
	qwen) ENVV+=(OPENAI_BASE_URL="$url/v1" OPENAI_API_KEY="${keys[1]}" OPENAI_MODEL=qwen3-coder) ;;
	opencode) ENVV+=(FAKE_API_KEY="${keys[1]}" OPENCODE_DISABLE_AUTOUPDATE=1 OPENCODE_DISABLE_MODELS_FETCH=1 OPENCODE_DISABLE_LSP_DOWNLOAD=1
		OPENCODE_DISABLE_SHARE=1 OPENCODE_DISABLE_DEFAULT_PLUGINS=1 OPENCODE_DISABLE_CLAUDE_CODE=1) ;;
	esac
}

# setargv AGENT PROGRAM PROMPT: ARGV, the one-shot invocation, tools approved.
setargv() {
	case $1 in
	claude) ARGV=("$2" -p "$3" --output-format text --dangerously-skip-permissions) ;;
	codex) ARGV=("$2" exec --skip-git-repo-check --dangerously-bypass-approvals-and-sandbox "$3") ;;
	gemini) ARGV=("$2" -p "$3" --output-format text --yolo) ;;
	qwen) ARGV=("$2" "$3" --output-format text --yolo) ;;
	opencode) ARGV=("$2" run "$3") ;;
	esac
}

# files WORK: the working directory's files and digests of their contents,
# one line each, for comparing what two runs changed.
files() {
	(cd "$1" && find . -type f | LC_ALL=C sort | while read -r f; do printf '%s %s\n' "$f" "$(sha256sum <"$f" | cut -c1-16)"; done)
}

# rerunline FILE: the last "rerun:" line of a rerun's stderr.
rerunline() { grep '^rerun:' "$1" | tail -n 1 || true; }

# tiers FILE: the counts of a rerun's "rerun:" line, without its prefix.
tiers() { rerunline "$1" | sed 's/^rerun: *//' | cut -c1-70; }

# missline FILE: the first line of a rerun's stderr that tells a miss.
missline() { grep -m 1 -i 'miss' "$1" | cut -c1-"${2:-70}" || true; }

# missexit CASSETTE: the seconds from the first refused model request
# (the miss, answered 400) to the agent's exit, from the rerun's cassette;
# empty when nothing was refused. The agents' own start-up takes minutes
# on a loaded machine; this is the part a miss is answerable for.
missexit() {
	awk '/^a [0-9]+ [0-9]+ [{]"n":[0-9]+,"status":400/ && t == "" { t = $2 }
		/^exit [{]/ { if (match($0, /"duration_ms":[0-9]+/)) d = substr($0, RSTART + 14, RLENGTH - 14) }
		END { if (t != "" && d != "") printf "%.1f", (d - t) / 1000 }' "$1" 2>/dev/null || true
}

# seconds START END: END-START (nanoseconds) in seconds, one decimal.
seconds() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1f", (b - a) / 1e9 }'; }

declare -A recorded
echo "recording with the older builds (fake model on $url) ..."
for agent in $agents; do
	older=$(version "$agent" older)
	for s in $scenarios; do
		fresh "$agent" "$s"
		base=$dir/runs/$agent/$s
		rm -f "$base"/*.cassette
		setenv "$agent" "$s"
		setargv "$agent" "$(bin "$agent" "$older")" "$(prompt "$s" "$base/work")"
		st=0
		(cd "$base/work" && env "${ENVV[@]}" timeout -k 5 "$limit" "$avcr" record --quiet --model on -o "$base/older.cassette" -- "${ARGV[@]}" \
			</dev/null >"$base/record.stdout" 2>"$base/record.stderr") || st=$?
		recorded[$agent/$s]=$st
		files "$base/work" >"$base/record.files"
	done
done
# Offline from here: nothing answers on the model's port.
kill $server 2>/dev/null || true
wait $server 2>/dev/null || true

# rerun AGENT SCENARIO PHASE VERSION: rerun the older recording with the
# build VERSION in a fresh directory at the recording's place (the prompts
# name it); PHASE.cassette, .stdout, .stderr, .files, .secs. PHASE
# "changed" edits notes.txt first. Returns the rerun's status.
rerun() {
	local agent=$1 s=$2 phase=$3 v=$4 base=$dir/runs/$1/$2 st=0 t0 t1
	fresh "$agent" "$s"
	[ "$phase" = changed ] && printf 'The secret word is MANGO.\n' >"$base/work/notes.txt"
	setenv "$agent" "$s"
	t0=$(date +%s%N)
	(cd "$base/work" && env "${ENVV[@]}" timeout -k 5 "$limit" "$avcr" rerun --agent "$(bin "$agent" "$v")" -o "$base/$phase.cassette" "$base/older.cassette" \
		</dev/null >"$base/$phase.stdout" 2>"$base/$phase.stderr") || st=$?
	t1=$(date +%s%N)
	seconds "$t0" "$t1" >"$base/$phase.secs"
	files "$base/work" >"$base/$phase.files"
	return $st
}

# same AGENT SCENARIO PHASE: empty when PHASE's rerun has the recording's
# normalised output and file changes, else what differs, in short.
same() {
	local base=$dir/runs/$1/$2 why=""
	if ! diff -q <("$avcr" normalize "$base/older.cassette" 2>&1) <("$avcr" normalize "$base/$3.cassette" 2>&1) >/dev/null; then
		why="output differs: $(diff <("$avcr" normalize "$base/older.cassette" 2>&1) <("$avcr" normalize "$base/$3.cassette" 2>&1) | grep '^[<>]' | head -n 2 | tr '\n' ' ' | cut -c1-120)"
	fi
	if ! diff -q "$base/record.files" "$base/$3.files" >/dev/null; then
		why="$why files differ: $(diff "$base/record.files" "$base/$3.files" | grep '^[<>]' | head -n 2 | tr '\n' ' ')"
	fi
	printf '%s' "$why"
}

passed=0 failed=0
pass() { passed=$((passed + 1)); printf '%-8s %-8s %-13s %-4s %-72s %s\n' "$1" "$2" "$3" ok "$4" "$5"; }
fail() { failed=$((failed + 1)); printf '%-8s %-8s %-13s %-4s %s\n' "$1" "$2" "$3" FAIL "$4"; }

echo
printf '%-8s %-8s %-13s %-4s %-72s %s\n' agent scenario check ok "tiers (the rerun: line) or what differs" seconds
for agent in $agents; do
	older=$(version "$agent" older) newer=$(version "$agent" newer)
	for s in $scenarios; do
		base=$dir/runs/$agent/$s
		if [ "${recorded[$agent/$s]}" != 0 ] || ! head -n 2 "$base/older.cassette" 2>/dev/null | grep -q '"model":'; then
			fail "$agent" "$s" record "exit ${recorded[$agent/$s]}, no model exchanges recorded: $(tail -n 1 "$base/record.stderr" | cut -c1-150)"
			continue
		fi
		leaked=$(grep -l -F -e "${keys[0]}" -e "${keys[1]}" -e "${keys[2]}" "$base/older.cassette" || true)
		if [ -z "$leaked" ]; then pass "$agent" "$s" "no key" "" ""; else fail "$agent" "$s" "no key" "a key is in $leaked"; fi

		st=0 same_build=0
		rerun "$agent" "$s" older "$older" || st=$?
		why=$(same "$agent" "$s" older)
		if [ "$st" = 0 ] && [ -z "$why" ]; then
			same_build=1
			pass "$agent" "$s" "$older" "$(tiers "$base/older.stderr")" "$(cat "$base/older.secs")"
		else
			fail "$agent" "$s" "$older" "exit $st $why $(rerunline "$base/older.stderr" | cut -c1-160)"
		fi

		st=0
		rerun "$agent" "$s" newer "$newer" || st=$?
		why=$(same "$agent" "$s" newer)
		"$avcr" drift "$base/older.cassette" "$base/newer.cassette" >"$base/drift.txt" 2>&1 || true
		if [ "$st" = 0 ] && [ -z "$why" ]; then
			pass "$agent" "$s" "→$newer" "$(tiers "$base/newer.stderr")" "$(cat "$base/newer.secs")"
		elif [ "$st" = 2 ] && [ "$same_build" = 1 ] && [ -n "$(missline "$base/newer.stderr")" ]; then
			# The new build asked what the recording never answered (the
			# old build reran clean): the miss names the change.
			pass "$agent" "$s" "→$newer" "miss: $(missline "$base/newer.stderr" 66)" "$(cat "$base/newer.secs")"
		else
			fail "$agent" "$s" "→$newer" "exit $st $why $(rerunline "$base/newer.stderr" | cut -c1-160) (see $base/drift.txt)"
		fi

		if [ "$s" = read ]; then # the file read changed since the recording: a miss, quickly
			st=0
			rerun "$agent" "$s" changed "$older" || st=$?
			secs=$(cat "$base/changed.secs") after=$(missexit "$base/changed.cassette")
			if [ "$st" = 2 ] && [ -n "$(missline "$base/changed.stderr")" ] && [ -n "$after" ] && awk -v s="$after" 'BEGIN { exit !(s < 30) }'; then
				pass "$agent" "$s" "changed file" "$(missline "$base/changed.stderr" 52); exit ${after}s after" "$secs"
			else
				fail "$agent" "$s" "changed file" "exit $st after ${secs}s (${after:-?}s after the refusal), want a miss (exit 2) and the agent gone in seconds: $(tail -n 1 "$base/changed.stderr" | cut -c1-150)"
			fi
		fi
	done
done

# gotest: AGENTVCR_MODE=rerun go test in a scratch module. A call is
# recorded with the older Claude Code through the stand-in (the fake model
# up again) and its golden accepted; rerun with the newer build offline,
# the newer build's stream-json differs (its version, its tools), so the
# golden is pending.
gotest() {
	local mod=$dir/gotest st=0
	[[ " $agents " == *" claude "* ]] || return 0
	rm -rf "$mod"
	mkdir -p "$mod"
	printf 'module example.com/upgradecheck\n\ngo 1.24\n\nrequire github.com/agentvcr/agentvcr v0.0.0\n\nreplace github.com/agentvcr/agentvcr => %s\n' "$root" >"$mod/go.mod"
	cat >"$mod/upgrade_test.go" <<'GO'
package upgradecheck

import (
	"os/exec"
	"testing"

	"github.com/agentvcr/agentvcr/agentvcrtest"
)

func TestMain(m *testing.M) { agentvcrtest.Main(m) }

func TestHello(t *testing.T) {
	agentvcrtest.StandIn(t, "testdata/cassettes")
	dir := agentvcrtest.Workspace(t, "")
	cmd := exec.Command("claude", "-p", "Reply with exactly: hello", "--output-format", "stream-json", "--verbose")
	cmd.Dir = dir
	out, err := cmd.Output()
	if err != nil {
		t.Fatal(err)
	}
	agentvcrtest.Golden(t, "hello", out, agentvcrtest.Cwd(dir))
}
GO
	(cd "$mod" && go mod tidy >"$mod/tidy.log" 2>&1) || true
	# The agent's home is the scenario's; Go's caches stay the caller's.
	local goenv=(GOMODCACHE="$(go env GOMODCACHE)" GOCACHE="$(go env GOCACHE)" GOPATH="$(go env GOPATH)")
	rm -f "$dir/fakemodel.url"
	"$dir/fakemodel" -log "$dir/fakemodel.log" >"$dir/fakemodel.url" &
	server=$!
	while [ ! -s "$dir/fakemodel.url" ]; do read -r -t 0.1 _ <>"$dir/fakemodel.log" || true; done
	url=$(head -n 1 "$dir/fakemodel.url")
	fresh claude gotest
	setenv claude gotest
	(cd "$mod" && env "${ENVV[@]}" "${goenv[@]}" AGENTVCR_MODE=once AGENTVCR_REAL_AGENT="$(bin claude "$(version claude older)")" \
		go test -count=1 ./... >"$mod/record.log" 2>&1) || true
	(cd "$mod" && "$avcr" review --accept >>"$mod/record.log" 2>&1) || true
	kill $server 2>/dev/null || true
	wait $server 2>/dev/null || true
	if [ ! -s "$mod/testdata/golden/hello.golden" ]; then
		fail claude gotest "go test" "no golden recorded (see $mod/record.log)"
		return 0
	fi
	fresh claude gotest
	(cd "$mod" && env "${ENVV[@]}" "${goenv[@]}" AGENTVCR_MODE=rerun AGENTVCR_REAL_AGENT="$(bin claude "$(version claude newer)")" \
		go test -count=1 ./... >"$mod/rerun.log" 2>&1) || st=$?
	if [ "$st" != 0 ] && [ -s "$mod/testdata/golden/hello.golden.new" ]; then
		pass claude gotest "go test" "pending hello.golden.new: $(diff "$mod/testdata/golden/hello.golden" "$mod/testdata/golden/hello.golden.new" | grep -c '^[<>]') lines changed" ""
	else
		fail claude gotest "go test" "exit $st, no pending golden: $(grep -m 1 -E 'FAIL|stand-in|rerun' "$mod/rerun.log" | cut -c1-150) (see $mod/rerun.log)"
	fi
}
gotest

echo "$passed passed, $failed failed"
[ "$failed" = 0 ]
