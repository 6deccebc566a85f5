package index

import (
	"fmt"
	"strings"
)

// A miss says what differs in a few words: a long prompt is shown once,
// cut, and where it differs from the closest recording, as excerpts
// around the first difference, never whole four times over.

// maxShown is the longest argument a miss shows whole.
const maxShown = 60

// excerpt shows s whole when short, else its start and its length.
func excerpt(s string) string {
	if len(s) <= maxShown {
		return fmt.Sprintf("%q", s)
	}
	return fmt.Sprintf("%q… (%d bytes)", cut(s, 0, maxShown*2/3), len(s))
}

// cut is s[from:to] within s, not splitting a UTF-8 sequence.
func cut(s string, from, to int) string {
	from, to = max(from, 0), min(to, len(s))
	for from > 0 && from < len(s) && s[from]&0xC0 == 0x80 {
		from--
	}
	for to < len(s) && to > 0 && s[to]&0xC0 == 0x80 {
		to++
	}
	return s[from:to]
}

// around shows got and rec near where they first differ: each whole when
// short, else a window of each around the first differing byte.
func around(got, rec string) (string, string) {
	if len(got) <= maxShown && len(rec) <= maxShown {
		return fmt.Sprintf("%q", got), fmt.Sprintf("%q", rec)
	}
	at := 0
	for at < len(got) && at < len(rec) && got[at] == rec[at] {
		at++
	}
	window := func(s string) string {
		from, to := at-maxShown/2, at+maxShown/2
		w := fmt.Sprintf("%q", cut(s, from, to))
		if from > 0 {
			w = "…" + w
		}
		if to < len(s) {
			w += "…"
		}
		return w
	}
	return window(got), window(rec)
}

// ShortArgs shows a call's arguments for a message, long ones cut.
func ShortArgs(args []string) string {
	q := make([]string, len(args))
	for i, a := range args {
		q[i] = excerpt(a)
	}
	return "[" + strings.Join(q, " ") + "]"
}

// describeDiff says how the call (got) differs from the recording (rec),
// at most three arguments' worth.
func describeDiff(rec, got Invocation) string {
	var parts []string
	for i := range max(len(rec.Args), len(got.Args)) {
		if len(parts) == 3 {
			parts = append(parts, "...")
			break
		}
		switch {
		case i >= len(rec.Args):
			parts = append(parts, fmt.Sprintf("argument %d %s was not recorded", i+1, excerpt(got.Args[i])))
		case i >= len(got.Args):
			parts = append(parts, fmt.Sprintf("argument %d %s is missing", i+1, excerpt(rec.Args[i])))
		case rec.Args[i] != got.Args[i]:
			g, r := around(got.Args[i], rec.Args[i])
			parts = append(parts, fmt.Sprintf("argument %d is %s, recorded %s", i+1, g, r))
		}
	}
	switch {
	case rec.StdinSHA256 == got.StdinSHA256:
	case got.StdinSHA256 == "":
		parts = append(parts, "the recording had piped stdin, this call has none")
	case rec.StdinSHA256 == "":
		parts = append(parts, "this call pipes stdin, the recording had none")
	default:
		parts = append(parts, "piped stdin differs")
	}
	if len(parts) == 0 {
		return "another take or working directory"
	}
	return strings.Join(parts, "; ")
}
