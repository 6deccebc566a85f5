package index

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// A listing split in two ranges, as listCassettes makes it on ext4, holds
// every name once, in directories small (listed by offset) and large
// (listed by hash: ext4 indexes a directory by hash once its names pass
// one block, some hundred of these).
func TestListDirSplit(t *testing.T) {
	for _, n := range []int{0, 3, 300, 1000} {
		dir := t.TempDir()
		for i := range n {
			os.WriteFile(filepath.Join(dir, fmt.Sprintf("name-%d-%x.cassette", i, i*7919)), nil, 0o644)
		}
		mid, split := listSplit(dir)
		if !split {
			mid = 1 << 62 // the ranges are still a partition of the positions
		}
		var got []string
		halves := [2]int{}
		for h, r := range [][2]int64{{0, mid}, {mid, -1}} {
			err := listDirRange(dir, r[0], r[1], func(name []byte, notFile bool) {
				got = append(got, string(name))
				halves[h]++
			})
			if err != nil {
				t.Fatal(err)
			}
		}
		ents, _ := os.ReadDir(dir)
		var want []string
		for _, e := range ents {
			want = append(want, e.Name())
		}
		slices.Sort(got)
		if !slices.Equal(got, want) {
			t.Fatalf("%d names: split listing has %d (%v), want %d", n, len(got), halves, len(want))
		}
		if split && n >= 1000 && (halves[0] < n/4 || halves[1] < n/4) {
			t.Errorf("%d names: halves of %v, want about even", n, halves)
		}
		t.Logf("%d names: halves %v (split %v)", n, halves, split)
	}
}
