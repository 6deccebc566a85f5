package index

import (
	"bufio"
	"bytes"
	"fmt"
	"math/rand/v2"
	"slices"
	"sort"
	"strings"
	"testing"
)

// searchSorted finds every line of a key, in order, and nothing for a key
// absent, in bodies from empty to some megabytes, with runs of one key that
// cross its 16 KiB read and lines of very different lengths.
func TestSearchSorted(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	for _, n := range []int{0, 1, 2, 3, 10, 150, 1000, 5000} {
		type line struct{ key, name string }
		var lines []line
		for i := range n {
			key := fmt.Sprintf("%016x", rng.Uint64()>>rng.IntN(8))
			copies := 1
			if rng.IntN(50) == 0 {
				copies = 1 + rng.IntN(400) // a run longer than the final read
			}
			for c := range copies {
				lines = append(lines, line{key, fmt.Sprintf("%s-%d-%d%s.cassette", key, i, c, strings.Repeat("x", rng.IntN(300)))})
			}
		}
		sort.SliceStable(lines, func(i, j int) bool { return lines[i].key < lines[j].key })
		var body bytes.Buffer
		want := map[string][]string{}
		for _, ln := range lines {
			fmt.Fprintf(&body, "%s\t%s\t%d\t%d\n", ln.key, ln.name, rng.IntN(1<<20), rng.Int64())
			want[ln.key] = append(want[ln.key], ln.name)
		}
		const head = "agentvcr-index v4 123\n"
		data := append([]byte(head), body.Bytes()...)
		probe := func(key string) {
			t.Helper()
			got, err := searchSorted(bytes.NewReader(data), int64(len(head)), int64(len(data)), key)
			if err != nil || !slices.Equal(got, want[key]) {
				t.Fatalf("%d lines: searchSorted(%s) = %d names, %v; want %d", len(lines), key, len(got), err, len(want[key]))
			}
		}
		for _, ln := range lines {
			if rng.IntN(max(1, len(lines)/500)) == 0 {
				probe(ln.key)
			}
		}
		if len(lines) > 0 {
			probe(lines[0].key)
			probe(lines[len(lines)-1].key)
		}
		for range 200 {
			probe(fmt.Sprintf("%016x", rng.Uint64()))
		}
		probe("")
		probe("ffffffffffffffffff")
	}
}

// An index written from memory holds exactly the kept lines and the added
// entries, sorted by key, whatever lines of the old body were damaged.
func TestMemIndexWrite(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for round := range 200 {
		var body bytes.Buffer
		n := rng.IntN(60)
		keys := make([]string, n)
		for i := range keys {
			keys[i] = fmt.Sprintf("%016x", rng.Uint64()>>1) // even keys stay free for added ones
			keys[i] = keys[i][:15] + "1"
		}
		slices.Sort(keys)
		for i, k := range keys {
			switch rng.IntN(8) {
			case 0:
				body.WriteString("damaged line\n")
			case 1:
				body.WriteString("\n")
			}
			fmt.Fprintf(&body, "%s\tc%d.cassette\t%d\t%d\n", k, i, rng.IntN(1000), rng.Int64N(1<<40))
		}
		if rng.IntN(4) == 0 {
			body.WriteString("a\tb\n")
		}
		m := &memIndex{body: body.Bytes(), lines: splitIndex(body.Bytes())}
		if len(m.lines) != n {
			t.Fatalf("round %d: %d lines found, want %d", round, len(m.lines), n)
		}
		m.keep = make([]bool, n)
		for i := range m.keep {
			m.keep[i] = rng.IntN(5) != 0
		}
		for i := range rng.IntN(5) {
			m.added = append(m.added, Entry{File: fmt.Sprintf("/d/new%d.cassette", i), Key: fmt.Sprintf("%016x", rng.Uint64())[:15] + "0",
				stamp: fileStamp{size: int64(i), mtime: 7}})
		}
		sort.Slice(m.added, func(i, j int) bool { return m.added[i].Key < m.added[j].Key })
		var want []byte
		for _, e := range m.entries("/d") {
			want = appendIndexLine(want, e)
		}
		var got bytes.Buffer
		w := bufio.NewWriter(&got)
		m.writeTo(w)
		w.Flush()
		if !bytes.Equal(got.Bytes(), want) {
			t.Fatalf("round %d: wrote\n%s\nwant\n%s", round, got.Bytes(), want)
		}
		if back := splitIndex(got.Bytes()); len(back) != len(m.added)+count(m.keep) {
			t.Fatalf("round %d: %d lines written, want %d", round, len(back), len(m.added)+count(m.keep))
		}
	}
}

func count(keep []bool) int {
	n := 0
	for _, k := range keep {
		if k {
			n++
		}
	}
	return n
}
