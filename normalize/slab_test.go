package normalize

import (
	"bytes"
	"fmt"
	"runtime"
	"slices"
	"testing"
	"unsafe"

	"github.com/agentvcr/agentvcr/cassette"
)

// TestSlabCutsApartBuffers: the buffers a slab gives do not overlap, are
// aligned for the tables cut from it, come from the heap once it is full,
// and a slab given back is taken again, empty.
func TestSlabCutsApartBuffers(t *testing.T) {
	for _, size := range []int{100, minHugeSlab, 3 * hugePage / 2} {
		s := takeSlab(size)
		if len(s.mem) < size {
			t.Fatalf("slab of %d bytes holds %d", size, len(s.mem))
		}
		// Only Linux maps slabs of their own: elsewhere they are heap
		// memory, aligned as the heap aligns it.
		if size >= minHugeSlab && runtime.GOOS == "linux" && uintptr(unsafe.Pointer(unsafe.SliceData(s.mem)))%hugePage != 0 {
			t.Errorf("slab of %d bytes is not aligned to a huge page", size)
		}
		inSlab := func(p unsafe.Pointer) bool {
			base := uintptr(unsafe.Pointer(unsafe.SliceData(s.mem)))
			return uintptr(p) >= base && uintptr(p) < base+uintptr(len(s.mem))
		}
		type owned struct {
			b    []byte
			fill byte
		}
		var bufs []owned
		for i := 0; ; i++ {
			n := 1 + i*37%(size/3+1)
			var b []byte
			if i%2 == 0 {
				b = s.bytes(n)
			} else {
				lines := slabSlice[heldLine](s, n/64+1)
				if uintptr(unsafe.Pointer(unsafe.SliceData(lines[:1])))%8 != 0 {
					t.Fatal("a table is not aligned")
				}
				lines = append(lines, heldLine{start: i, end: -i})
				b = unsafe.Slice((*byte)(unsafe.Pointer(&lines[0])), cap(lines)*int(unsafe.Sizeof(heldLine{})))[:0]
			}
			if len(b) != 0 || cap(b) < n {
				t.Fatalf("asked for %d bytes, got len %d cap %d", n, len(b), cap(b))
			}
			b = b[:cap(b)]
			if !inSlab(unsafe.Pointer(unsafe.SliceData(b))) {
				break // full: from the heap now
			}
			for j := range b {
				b[j] = byte(i)
			}
			bufs = append(bufs, owned{b, byte(i)})
		}
		if len(bufs) < 2 {
			t.Fatalf("slab of %d bytes gave %d buffers", size, len(bufs))
		}
		for _, o := range bufs {
			for _, c := range o.b {
				if c != o.fill {
					t.Fatalf("slab of %d bytes: buffer %d was written over by another", size, o.fill)
				}
			}
		}
		s.give()
		if size >= minHugeSlab {
			slabs.Lock()
			kept := slices.Contains(slabs.free, s)
			slabs.Unlock()
			again := takeSlab(size) // s, or another given back meanwhile
			if !kept || again.used != 0 || len(again.mem) < size {
				t.Errorf("slab of %d bytes given back: kept %v; taken again, %d used of %d", size, kept, again.used, len(again.mem))
			}
			again.give()
		}
	}
}

// panicWriter panics at its first write, as a caller's writer may (and
// the caller recover), holding on to the memory it was given.
type panicWriter struct{ p []byte }

func (w *panicWriter) Write(p []byte) (int, error) {
	w.p = p
	panic("writer gives up")
}

// TestSlabOfAPanickedRunIsNotGivenBack: a run whose writer panics leaves
// its slab to the workers that may still use it: the next run must not
// cut its buffers from the same memory.
func TestSlabOfAPanickedRunIsNotGivenBack(t *testing.T) {
	defer func(w int, force bool) { pieceWorkers, forcePieces = w, force }(pieceWorkers, forcePieces)
	pieceWorkers, forcePieces = 1, true // the run's only worker is the caller
	var data []byte
	for i := 0; len(data) < 3*minPieces; i++ {
		data = fmt.Appendf(data, `{"type":"assistant","text":"line %d of the run"}`+"\n", i)
	}
	w := &panicWriter{}
	func() {
		defer func() {
			if recover() == nil {
				t.Fatal("the writer's panic did not reach the caller")
			}
		}()
		New(Options{Format: cassette.StreamJSON}).Copy(w, bytes.NewReader(data), cassette.Stdout)
	}()
	if len(w.p) == 0 {
		t.Fatal("nothing was written")
	}
	at := uintptr(unsafe.Pointer(unsafe.SliceData(w.p)))
	slabs.Lock()
	defer slabs.Unlock()
	for _, s := range slabs.free {
		base := uintptr(unsafe.Pointer(unsafe.SliceData(s.mem)))
		if at >= base && at < base+uintptr(len(s.mem)) {
			t.Fatal("the slab of a run that panicked was given back, and would be used by two")
		}
	}
}

// TestSlabsKeptAreBounded: slabs given back by pipelines that ran side by
// side are kept up to maxKeptSlabs; the others are returned to the system,
// not held for the life of the process.
func TestSlabsKeptAreBounded(t *testing.T) {
	var taken []*slab
	for range maxKeptSlabs + 3 {
		s := takeSlab(minHugeSlab)
		s.bytes(100)[:1][0] = 'x' // touched, as a pipeline would
		taken = append(taken, s)
	}
	for _, s := range taken {
		s.give()
	}
	slabs.Lock()
	kept := len(slabs.free)
	var ours int
	for _, s := range slabs.free {
		if slices.Contains(taken, s) {
			ours++
		}
	}
	slabs.Unlock()
	if kept != maxKeptSlabs || ours == 0 {
		t.Errorf("after %d slabs given back, %d kept (%d of them these); want %d", len(taken), kept, ours, maxKeptSlabs)
	}
	again := takeSlab(minHugeSlab) // a kept one, usable
	b := again.bytes(minHugeSlab)[:minHugeSlab]
	b[0], b[len(b)-1] = 1, 2
	again.give()
}
