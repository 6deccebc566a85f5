#!/usr/bin/env bash
# make dist-check: what a user gets from make dist. Every archive holds its
# platform's binary and checksums.txt verifies (distcheck.py); in a scratch
# Node project with no Go on PATH, npm install of the packed agentvcr and
# its linux-x64 package gives a working npx agentvcr, the helper works from
# CommonJS and ESM, and a node:test test using standIn() records the Claude
# Agent SDK (pinned, from npm) against the fake model on loopback once and
# replays it with the model down; the wheel installs with pip from the file
# into a venv and its stand_in() replays a recorded call (unittest).
#
# Needs node/npm (and the npm registry, for the SDK) and python3 with venv;
# says what it skips without them. DIST=dir checks an existing make dist
# output instead of building one. Linux x86-64 only (the packages tried
# are that platform's).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
dist=${DIST:-}
if [ -z "$dist" ]; then
	make dist
	dist=$root/dist
fi
dist=$(cd "$dist" && pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/agentvcr-distcheck.XXXXXX")
trap 'kill $server 2>/dev/null || true; rm -rf "$work"' EXIT
server=
status=0

echo "== archives and checksums"
python3 scripts/distcheck.py "$dist" || status=1
if (cd "$dist" && sha256sum --quiet -c checksums.txt); then echo "ok sha256sum -c checksums.txt"; else status=1; fi

# A PATH with node, npm and python but no Go: what a Node or Python user has.
nogo=$work/nogo-bin
mkdir -p "$nogo"
for tool in node npm npx python3 sh bash env cat ls rm mkdir tar gzip sha256sum timeout uname; do
	p=$(command -v "$tool" 2>/dev/null) && ln -s "$p" "$nogo/$tool"
done
nogo_path=$nogo

# The check records its own calls, against the fake model on loopback or the
# simulated agent: under CI, record mode would otherwise act as replay.
export AGENTVCR_RECORD_IN_CI=1

# Go builds the test's fixtures (before Go leaves PATH): the fake model,
# and the simulated agent recorded for the Python check.
go build -o "$work/fakemodel" ./internal/testsupport/fakemodel/cmd/fakemodel
go build -o "$work/cursor-agent-sim" ./cmd/cursor-agent-sim

if [ "$(uname -s)-$(uname -m)" != Linux-x86_64 ]; then
	echo "skipped: the npm and pip checks install the linux-x64 packages"
	exit 0
fi
if command -v npm >/dev/null 2>&1; then
	echo "== npm: agentvcr and @agentvcr/linux-x64 in a scratch project, no Go on PATH"
	app=$work/node-app
	mkdir -p "$app/testdata/cassettes" "$app/work"
	printf '# Demo\n\nA small project.\n' >"$app/work/README.md"
	cp scripts/distcheck/*.test.* "$app/"
	main_tgz=$(ls "$dist"/npm/agentvcr-[0-9]*.tgz)
	plat_tgz=$(ls "$dist"/npm/agentvcr-linux-x64-*.tgz)
	sdk=$(node -p 'require("./scripts/sdkclients/node/package.json").dependencies["@anthropic-ai/claude-agent-sdk"]')
	cli=$(node -p 'require("./scripts/sdkclients/node/package.json").dependencies["@anthropic-ai/claude-code"]')
	printf '{ "name": "app", "private": true, "type": "module", "scripts": { "test": "node --test" } }\n' >"$app/package.json"
	if ! (cd "$app" && PATH=$nogo_path npm install --no-audit --no-fund --loglevel=error \
		"$main_tgz" "$plat_tgz" "@anthropic-ai/claude-agent-sdk@$sdk" "@anthropic-ai/claude-code@$cli" >"$work/npm.log" 2>&1); then
		echo "FAIL npm install (see below)"; cat "$work/npm.log"; exit 1
	fi
	echo "ok npm install $(basename "$main_tgz") $(basename "$plat_tgz") + the Claude Agent SDK $sdk"
	out=$(cd "$app" && PATH=$nogo_path npx --no-install agentvcr version)
	echo "ok npx agentvcr version: $out"
	(cd "$app" && PATH=$nogo_path npx --no-install agentvcr --help >/dev/null) && echo "ok npx agentvcr --help"
	(cd "$app" && PATH=$nogo_path npx --no-install agentvcr help record >/dev/null) && echo "ok npx agentvcr help record"
	if (cd "$app" && PATH=$nogo_path npx --no-install agentvcr bogus 2>/dev/null); then
		echo "FAIL npx agentvcr bogus: exit 0"; status=1
	else
		echo "ok npx agentvcr bogus: exit $?"
	fi
	(cd "$app" && PATH=$nogo_path node --test helper.test.cjs esm.test.mjs >"$work/helper.log" 2>&1) &&
		echo "ok node --test: the helper from CommonJS and ESM" || { echo "FAIL helper tests"; cat "$work/helper.log"; status=1; }

	"$work/fakemodel" -log "$work/fakemodel.log" >"$work/fakemodel.url" &
	server=$!
	while [ ! -s "$work/fakemodel.url" ]; do
		kill -0 $server 2>/dev/null || { echo "FAIL the fake model did not start"; exit 1; }
		read -r -t 0.1 _ <>"$work/fakemodel.log" || true
	done
	url=$(head -n 1 "$work/fakemodel.url")
	home=$work/home
	mkdir -p "$home/tmp"
	claude_test() {
		local mode=$1
		(cd "$app" && env PATH=$nogo_path HOME="$home" TMPDIR="$home/tmp" XDG_CONFIG_HOME="$home/.config" \
			AGENTVCR_MODE=$mode REAL_CLAUDE="$app/node_modules/.bin/claude" WORK="$app/work" RESULT_FILE="$work/$mode.result" \
			ANTHROPIC_BASE_URL="$url" ANTHROPIC_API_KEY=sk-ant-offline-0000 DISABLE_TELEMETRY=1 DISABLE_ERROR_REPORTING=1 \
			DISABLE_AUTOUPDATER=1 CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1 NO_COLOR=1 \
			timeout -k 5 180 node --test claude.test.mjs >"$work/claude-$mode.log" 2>&1)
	}
	if claude_test record; then
		n=$(ls "$app"/testdata/cassettes | wc -l)
		echo "ok node --test claude.test.mjs, AGENTVCR_MODE=record: $n cassette(s), result: $(head -c 80 "$work/record.result" | tr '\n' ' ')"
		kill $server; wait $server 2>/dev/null || true
		if claude_test replay && cmp -s "$work/record.result" "$work/replay.result"; then
			echo "ok node --test claude.test.mjs, replayed with the model down: the same result"
		else
			echo "FAIL replay"; tail -30 "$work/claude-replay.log"; status=1
		fi
	else
		echo "FAIL record"; tail -30 "$work/claude-record.log"; status=1
	fi
else
	echo "skipped: npm checks (npm is not installed)"
fi

if python3 -c 'import venv, ensurepip' 2>/dev/null; then
	echo "== pip: the wheel into a venv, from the file"
	whl=$(ls "$dist"/python/agentvcr-*manylinux_2_17_x86_64*.whl)
	python3 -m venv "$work/venv"
	PATH=$nogo_path "$work/venv/bin/pip" install --quiet --no-index "$whl"
	echo "ok pip install --no-index $(basename "$whl")"
	echo "ok $("$work/venv/bin/agentvcr" version) (the console script)"
	# A call of the simulated agent, recorded through the stand-in.
	py=$work/py
	mkdir -p "$py/cassettes" "$py/work"
	printf '# Demo\n' >"$py/work/README.md"
	(cd "$py/work" && SIM="$work/cursor-agent-sim" PATH=$nogo_path "$work/venv/bin/python" -c '
import os, subprocess, agentvcr
s = agentvcr.stand_in(cassettes="../cassettes", mode="record", real_agent=os.environ["SIM"])
out = subprocess.run([s.bin("cursor-agent"), "--print", "--output-format", "text", "Summarise README.md"],
                     env=dict(os.environ, **s.env), capture_output=True, text=True, check=True)
open("../expect.txt", "w").write(out.stdout)
s.cleanup()')
	echo "ok recorded $(ls "$py/cassettes" | wc -l) cassette(s) from Python"
	cp scripts/distcheck/test_standin.py "$py/"
	if (cd "$py" && CASSETTES="$py/cassettes" EXPECT="$py/expect.txt" WORK="$py/work" PATH=$nogo_path:$work/venv/bin \
		"$work/venv/bin/python" -m unittest -v test_standin >"$work/unittest.log" 2>&1); then
		echo "ok python -m unittest: $(grep -c ' ok$' "$work/unittest.log") tests, stand_in() replays the recorded call"
	else
		echo "FAIL python -m unittest"; cat "$work/unittest.log"; status=1
	fi
else
	echo "skipped: pip checks (python3 has no venv module: apt-get install python3-venv)"
fi
exit $status
