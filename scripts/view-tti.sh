#!/bin/sh
# Measures the pages of `agentvcr view` for runs of 10^4, 10^5 and 10^6
# tiny events: page size, time to write it, and time until headless
# Chromium has run the page's script (time to interactive). Needs Chromium
# (apt-get install chromium). With a directory argument, screenshots of
# the pages are left there. ROWS=N measures pages of N rows instead of the
# default (ROWS=2000000 shows a run unpaged).
set -eu
cd "$(dirname "$0")/.."
if [ $# -gt 0 ]; then
	mkdir -p "$1"
	AGENTVCR_VIEW_OUT=$(cd "$1" && pwd)
	export AGENTVCR_VIEW_OUT
fi
AGENTVCR_TTI=1 AGENTVCR_TTI_ROWS=${ROWS:-} go test -count=1 -timeout 60m -run '^$' -bench '^BenchmarkTimeToInteractive$' -benchtime 1x ./internal/tools/view | grep -E 'events=|^(ok|FAIL|---)'
