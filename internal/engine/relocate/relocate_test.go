package relocate

import (
	"bytes"
	"strings"
	"testing"
)

var moves = []Move{
	{From: "/tmp", To: "/var/tmp"},
	{From: "/tmp/TestDo1/003", To: "/tmp/TestDo2/001"},
	{From: "/home/rec", To: "/home/me"},
}

func TestBytes(t *testing.T) {
	m := New(moves...)
	for _, c := range []struct{ in, want string }{
		{"/tmp/TestDo1/003/summary.txt", "/tmp/TestDo2/001/summary.txt"},                 // longest first
		{"cwd /tmp/TestDo1/003\n", "cwd /tmp/TestDo2/001\n"},                             // the whole path
		{`{"path":"\/tmp\/TestDo1\/003\/a.go"}`, `{"path":"\/tmp\/TestDo2\/001\/a.go"}`}, // JSON-escaped
		{"/tmp/TestDo1/0031/x", "/var/tmp/TestDo1/0031/x"},                               // not the longer name
		{"/tmp/ab /tmpx /tmp.d", "/var/tmp/ab /tmpx /tmp.d"},                             // no boundary after /tmp in the last two
		{"/x/tmp/a x/tmp/a", "/x/tmp/a x/tmp/a"},                                         // no boundary before
		{"file:///tmp/a", "file:///var/tmp/a"},
		{`"/home/rec"`, `"/home/me"`},
		{"/home/recipes", "/home/recipes"},
		{"", ""},
	} {
		if got := string(m.Bytes([]byte(c.in))); got != c.want {
			t.Errorf("%q: got %q, want %q", c.in, got, c.want)
		}
	}
}

func TestNewLeavesOutWhatCannotMove(t *testing.T) {
	m := New(Move{"/a", "/a"}, Move{"", "/b"}, Move{"rel", "/b"}, Move{"/", "/b"}, Move{"/c", "d"})
	if !m.Empty() {
		t.Errorf("moves kept: %q", m.pats)
	}
	var nilMap *Map
	if !nilMap.Empty() || string(nilMap.Bytes([]byte("/a"))) != "/a" {
		t.Error("a nil map moves something")
	}
}

// Cut anywhere, in any number of writes, the stream is rewritten as if it
// came in one piece, and each write passes on what is settled at once.
func TestWritersCutAnywhere(t *testing.T) {
	m := New(moves...)
	in := `cd /tmp/TestDo1/003 && cat "\/tmp\/TestDo1\/003\/x" /tmp/ab /home/rec/.cfg /tmp/TestDo1/003`
	want := string(m.Bytes([]byte(in)))
	if !strings.Contains(want, "/tmp/TestDo2/001") || strings.Contains(want, "TestDo1/003") {
		t.Fatalf("whole: %q", want)
	}
	for i := 0; i <= len(in); i++ {
		for j := i; j <= len(in); j++ {
			var out, errs bytes.Buffer
			o, _ := m.Writers(&out, &errs)
			o.Write([]byte(in[:i]))
			o.Write([]byte(in[i:j]))
			o.Write([]byte(in[j:]))
			if err := o.Flush(); err != nil {
				t.Fatal(err)
			}
			if out.String() != want {
				t.Fatalf("cut at %d,%d: %q", i, j, out.String())
			}
		}
	}
}

// What a writer holds back is a prefix of a path to move, never more: a
// long line with no such path passes at once, and one that ends in "/tm"
// holds three bytes.
func TestWriterHoldsLittle(t *testing.T) {
	m := New(moves...)
	var out bytes.Buffer
	o, _ := m.Writers(&out, &bytes.Buffer{})
	long := strings.Repeat("x/y ", 1<<18)
	o.Write([]byte(long))
	if out.Len() != len(long) {
		t.Fatalf("passed on %d of %d bytes", out.Len(), len(long))
	}
	o.Write([]byte(" /tm"))
	if len(o.held) != 3 || out.Len() != len(long)+1 {
		t.Fatalf("held %q", o.held)
	}
	o.Write([]byte("p/TestDo1/003\n"))
	if !strings.HasSuffix(out.String(), " /tmp/TestDo2/001\n") {
		t.Fatalf("end %q", out.String()[len(long):])
	}
}

// Two streams into one place keep their order: a write to one passes on
// what the other holds first.
func TestWritersKeepOrder(t *testing.T) {
	m := New(moves...)
	var both bytes.Buffer
	o, e := m.Writers(&both, &both)
	o.Write([]byte("out /tm"))
	e.Write([]byte("err\n"))
	o.Write([]byte("p/x\n"))
	o.Flush()
	if got := both.String(); got != "out /tmerr\np/x\n" {
		t.Errorf("got %q", got)
	}
}

func TestUnchangedWithoutMoves(t *testing.T) {
	var out bytes.Buffer
	o, _ := New().Writers(&out, &out)
	o.Write([]byte("/tmp/x"))
	if out.String() != "/tmp/x" {
		t.Errorf("got %q", out.String())
	}
}

// Grown bounds what output becomes, rewritten: here every byte is part of
// a moved path, the shortest growing most.
func TestGrown(t *testing.T) {
	if n := (*Map)(nil).Grown(100); n != 100 {
		t.Errorf("nil map: %d", n)
	}
	m := New(Move{From: "/w", To: "/tmp/work"}, Move{From: "/home/u", To: "/h"})
	out := m.Bytes([]byte(strings.Repeat("/w ", 10)[:29]))
	if n := m.Grown(29); n < int64(len(out)) {
		t.Errorf("Grown(29) = %d, but 29 bytes became %d", n, len(out))
	}
	if n := m.Grown(2); n != int64(len("/tmp/work")) {
		t.Errorf("Grown(2) = %d, want %d", n, len("/tmp/work"))
	}
	if n := m.Grown(0); n != 0 {
		t.Errorf("Grown(0) = %d", n)
	}
}
