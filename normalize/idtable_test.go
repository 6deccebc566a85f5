package normalize

import (
	"fmt"
	"testing"
)

// TestIDTableMany: a hundred thousand uuids (the table grows many times)
// keep their numbers, in order of arrival; other ids are numbered within
// their kind alongside.
func TestIDTableMany(t *testing.T) {
	n := New(Options{})
	uuid := func(i int) string {
		return fmt.Sprintf("%08x-0000-4000-8000-%012x", uint32(i)*2654435761, i)
	}
	const count = 100000
	for i := range count {
		if got, want := n.identity("UUID", []byte(uuid(i))), fmt.Sprintf("<UUID-%d>", i+1); got != want {
			t.Fatalf("uuid %d: %s, want %s", i, got, want)
		}
		if i%1000 == 0 {
			if got, want := n.identity("CALL", []byte(fmt.Sprintf("toolu_%d", i))), fmt.Sprintf("<CALL-%d>", i/1000+1); got != want {
				t.Fatalf("call %d: %s, want %s", i, got, want)
			}
		}
	}
	for i := count - 1; i >= 0; i -= 997 {
		if got, want := n.identity("UUID", []byte(uuid(i))), fmt.Sprintf("<UUID-%d>", i+1); got != want {
			t.Fatalf("uuid %d again: %s, want %s", i, got, want)
		}
	}
	if got := n.identity("CALL", []byte("toolu_5000")); got != "<CALL-6>" {
		t.Fatalf("call again: %s", got)
	}
	// Seen as a uuid first, then as a session: a session from there on.
	if got := n.identity("SESSION", []byte(uuid(7))); got != "<SESSION-1>" {
		t.Fatalf("session: %s", got)
	}
	if got := n.identity("UUID", []byte(uuid(7))); got != "<SESSION-1>" {
		t.Fatalf("session seen again as a uuid: %s", got)
	}
	if n.idents.nUUIDs != count || len(n.idents.index) < count*4/3 {
		t.Fatalf("%d uuids kept in an index of %d", n.idents.nUUIDs, len(n.idents.index))
	}
}
