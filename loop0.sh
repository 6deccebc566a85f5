for f in /tmp/sb/extra/*.cassette; do mv "$f" /tmp/sb/tapes/; /tmp/hello/hello >/dev/null; done
