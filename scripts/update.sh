#!/bin/sh
# Refresh the golden files from the cassettes, check the suite passes
# without -update, and show what changed for review.
#
#   scripts/update.sh
#
# goldie's -update flag rewrites each golden a script compares, normalised.
# For each cassette that differs from the last commit, "agentvcr diff" then
# reports the drift between the committed recording and the new one: changed
# events and fields, and the shape drift (event types, field paths and their
# JSON types, tool kinds added or removed).
set -eu
cd "$(dirname "$0")/.."

# The packages with goldens: only their test binaries know goldie's -update.
packages=$(find . -path '*/testdata/golden' -type d -not -path './.git/*' | sed 's#/testdata/golden$##' | sort)
go test -count=1 -run '^TestScript$' $packages -update
go test -count=1 -run '^TestScript$' $packages

if ! git rev-parse --verify -q HEAD >/dev/null 2>&1; then
	exit 0
fi
echo
echo "update.sh: goldens changed since the last commit:"
git diff --stat -- '*.golden' | sed 's/^/    /'

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT INT TERM
go build -o "$tmp/agentvcr" ./cmd/agentvcr
git diff --name-only -- '*.cassette' | while read -r file; do
	git show "HEAD:$file" >"$tmp/old.cassette" 2>/dev/null || continue
	echo
	echo "update.sh: drift in $file (committed vs new):"
	"$tmp/agentvcr" diff "$tmp/old.cassette" "$file" | sed 's/^/    /' || true
done
