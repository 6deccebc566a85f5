#!/bin/sh
# Refresh the golden files from the cassettes, check the suite passes
# without -update, and show what changed for review.
#
#   scripts/update.sh
#
# goldie's -update flag rewrites each golden a test compares, normalised;
# GOLDIE_UPDATE=1 turns it on in every package at once (only the packages
# that compare goldens define -update).
# For each cassette that differs from the last commit, "agentvcr diff" then
# reports the drift between the committed recording and the new one: changed
# events and fields, and the shape drift (event types, field paths and their
# JSON types, tool kinds added or removed).
set -eu
cd "$(dirname "$0")/.."

# The -update run's output is shown only when it fails: a failure there (a
# script that cannot run, a golden that cannot be written) must not be hidden.
log=$(mktemp)
if ! GOLDIE_UPDATE=1 go test -count=1 ./... >"$log" 2>&1; then
	grep -v '^ok ' "$log" >&2 || true
	rm -f "$log"
	echo "update.sh: GOLDIE_UPDATE=1 go test failed (above); the goldens it could write are written" >&2
	exit 1
fi
rm -f "$log"
go test -count=1 ./...

if ! git rev-parse --verify -q HEAD >/dev/null 2>&1; then
	exit 0
fi
echo
echo "update.sh: goldens changed since the last commit:"
git diff --stat -- '*.golden' | sed 's/^/    /'

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT INT TERM
go build -o "$tmp/agentvcr" ./cmd/agentvcr
unchanged=0
for file in $(git diff --name-only -- '*.cassette'); do
	git show "HEAD:$file" >"$tmp/old.cassette" 2>/dev/null || continue
	if "$tmp/agentvcr" diff "$tmp/old.cassette" "$file" >"$tmp/drift"; then
		unchanged=$((unchanged + 1))
		continue
	fi
	echo
	echo "update.sh: drift in $file (committed vs new):"
	sed 's/^/    /' "$tmp/drift"
done
echo
echo "update.sh: $unchanged re-recorded cassettes are unchanged after normalisation."
