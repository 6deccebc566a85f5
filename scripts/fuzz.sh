#!/usr/bin/env bash
# Runs every fuzz target of the module for the given time each (default 20s).
set -euo pipefail
cd "$(dirname "$0")/.."
time=${1:-20s}
for pkg in $(go list ./...); do
	for target in $(go test -list '^Fuzz' "$pkg" | grep '^Fuzz' || true); do
		echo "== $pkg $target"
		go test -run '^$' -fuzz "^${target}\$" -fuzztime "$time" "$pkg"
	done
done
