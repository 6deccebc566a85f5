package golden

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"

	"github.com/agentvcr/agentvcr/internal/tools/drift"
)

// Limits that keep a diff readable whatever the size of the lines.
const (
	maxDiffEntries  = 12 // changed, added or removed lines shown
	maxFieldChanges = 8  // changed fields shown per changed event
)

// Diff describes how got differs from want, one entry per differing
// line, through contract's event diff: a changed JSON event shows its
// changed fields, a long line or value an excerpt around its first
// difference. It returns "" when the two are equal.
func Diff(wantName, gotName string, want, got []byte) string {
	if bytes.Equal(want, got) {
		return ""
	}
	ops, err := drift.DiffEvents(bytes.NewReader(want), bytes.NewReader(got))
	if err != nil { // not expected of in-memory readers
		return fmt.Sprintf("the %s and the %s differ (%v)\n", wantName, gotName, err)
	}
	r := diffWriter{wantName: wantName, gotName: gotName}
	for i, op := range ops {
		if i == maxDiffEntries {
			fmt.Fprintf(&r.b, "... and %d more differing lines\n", len(ops)-i)
			break
		}
		r.op(op)
	}
	// An empty side has no last line to end: the lines the other holds say it all.
	if len(ops) == 0 || endsInNewline(want) != endsInNewline(got) && len(want) > 0 && len(got) > 0 {
		fmt.Fprintf(&r.b, "%s\n", newlineNote(wantName, gotName, endsInNewline(want), endsInNewline(got)))
	}
	return r.b.String()
}

func endsInNewline(p []byte) bool { return len(p) > 0 && p[len(p)-1] == '\n' }

func newlineNote(wantName, gotName string, want, got bool) string {
	say := func(b bool) string {
		if b {
			return "ends with a newline"
		}
		return "does not end with a newline"
	}
	return fmt.Sprintf("the %s %s, the %s %s", wantName, say(want), gotName, say(got))
}

// diffWriter writes drift.DiffOps for a test failure, naming the two
// sides ("golden" and "actual").
type diffWriter struct {
	wantName, gotName string
	b                 strings.Builder
}

func (r *diffWriter) op(op drift.DiffOp) {
	switch op.Op {
	case drift.Removed:
		fmt.Fprintf(&r.b, "%s line %d: %s only in the %s: %s\n", r.wantName, op.LineA, noun(op.LabelA), r.wantName, op.Old)
	case drift.Added:
		fmt.Fprintf(&r.b, "%s line %d: %s only in the %s: %s\n", r.gotName, op.LineB, noun(op.LabelB), r.gotName, op.New)
	default:
		where := fmt.Sprintf("line %d", op.LineA)
		if op.LineB != op.LineA {
			where = fmt.Sprintf("%s line %d, %s line %d", r.wantName, op.LineA, r.gotName, op.LineB)
		}
		if op.Fields == nil {
			how := "changed"
			if op.LabelA != "text" {
				how = "changed in layout only (spacing or member order)"
			}
			fmt.Fprintf(&r.b, "%s: %s %s\n", where, noun(op.LabelA), how)
			// Quoted, so that a difference in spaces or control bytes shows.
			r.pair("    ", strconv.Quote(op.Old), strconv.Quote(op.New))
			return
		}
		fmt.Fprintf(&r.b, "%s: %s changed\n", where, noun(op.LabelA))
		for i, f := range op.Fields {
			if i == maxFieldChanges {
				fmt.Fprintf(&r.b, "    ... and %d more changed fields\n", len(op.Fields)-i)
				break
			}
			r.field(f)
		}
	}
}

func (r *diffWriter) field(f drift.FieldChange) {
	switch f.Op {
	case drift.Removed:
		fmt.Fprintf(&r.b, "    %s: only in the %s: %s\n", pathName(f.Path), r.wantName, f.Old)
	case drift.Added:
		fmt.Fprintf(&r.b, "    %s: only in the %s: %s\n", pathName(f.Path), r.gotName, f.New)
	default:
		fmt.Fprintf(&r.b, "    %s:\n", pathName(f.Path))
		r.pair("        ", f.Old, f.New)
	}
}

// pair writes the two sides of a change under each other, names aligned.
func (r *diffWriter) pair(indent, want, got string) {
	w := max(len(r.wantName), len(r.gotName))
	fmt.Fprintf(&r.b, "%s%*s: %s\n%s%*s: %s\n", indent, w, r.wantName, want, indent, w, r.gotName, got)
}

// noun names a line for a reader: "assistant event", "tool_call/started
// readToolCall event", or "text line" for a line that is not JSON.
func noun(label string) string {
	if label == "text" {
		return "text line"
	}
	return label + " event"
}

// pathName names a field; the whole document, whose path is "", is ".".
func pathName(path string) string {
	if path == "" {
		return "."
	}
	return path
}
