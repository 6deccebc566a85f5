#!/bin/sh
# Makes docs/view.png, the README's picture of `agentvcr view`, from a
# cassette of the suite. Needs Chromium (apt-get install chromium).
set -eu
cd "$(dirname "$0")/.."
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cassette=testdata/cassettes/stream-json-read-readme-md-then-write-a-summary-f2f781f963855e3b.cassette
go run ./cmd/agentvcr view -o "$tmp/page.html" "$cassette"
chromium --headless --no-sandbox --disable-gpu --hide-scrollbars --user-data-dir="$tmp/profile" \
	--window-size=1280,1500 --virtual-time-budget=3000 --screenshot="$tmp/view.png" "file://$tmp/page.html" 2>/dev/null
mv "$tmp/view.png" docs/view.png
echo "wrote docs/view.png"
