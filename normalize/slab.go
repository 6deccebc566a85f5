package normalize

import (
	"sync"
	"unsafe"
)

// A pipeline's large buffers (its pieces, their output, the joiner's
// tables of a piece's lines and open values) hold no pointers and live as
// long as the pipeline. They are cut from one block of memory, a slab,
// that the kernel is asked to back with huge pages (slabMemory): first
// touched, a megabyte of buffers is then one page fault, not 256. Page
// faults are much of what a run as a process spends after its work (in a
// virtual machine one can cost 20 µs); the buffers are touched once and
// reused from piece to piece, so that is all they would save.
//
// A slab is memory of its own, outside the heap: allocated there, it
// would count as heap, and the 50 MiB run would collect garbage it does
// not make. A slab given back is kept for the next pipeline (slabs), up to
// maxKeptSlabs of them; one more is returned to the system, so that a
// process that once ran many pipelines at once (a parallel test suite)
// does not hold their memory for the rest of its life.
type slab struct {
	mu    sync.Mutex
	mem   []byte // all of it
	used  int
	unmap func() // returns mem to the system; nil for heap memory
}

// maxKeptSlabs is how many slabs given back are kept for reuse: a command
// runs one pipeline, a test process a few side by side.
const maxKeptSlabs = 2

// hugePage is the size of a huge page (x86-64, arm64 with 4 KiB pages).
const hugePage = 2 << 20

// minHugeSlab is the least a slab must hold to be memory of its own: a
// smaller one is allocated on the heap (tests cut runs into tiny pieces).
const minHugeSlab = hugePage / 4

var slabs struct {
	sync.Mutex
	free []*slab
}

// takeSlab returns a slab of at least size bytes, empty.
func takeSlab(size int) *slab {
	if size < minHugeSlab {
		return &slab{mem: make([]byte, size)}
	}
	// Whole huge pages: a huge page backs only an aligned 2 MiB range
	// that the mapping holds whole.
	size = (size + hugePage - 1) / hugePage * hugePage
	slabs.Lock()
	defer slabs.Unlock()
	for i, s := range slabs.free {
		if len(s.mem) >= size {
			slabs.free = append(slabs.free[:i], slabs.free[i+1:]...)
			s.used = 0
			return s
		}
	}
	mem, unmap := slabMemory(size)
	return &slab{mem: mem, unmap: unmap}
}

// give keeps s for the next pipeline: nothing may use its buffers after.
func (s *slab) give() {
	if len(s.mem) < minHugeSlab {
		return // the heap's
	}
	slabs.Lock()
	keep := len(slabs.free) < maxKeptSlabs
	if keep {
		slabs.free = append(slabs.free, s)
	}
	slabs.Unlock()
	if !keep && s.unmap != nil {
		s.unmap()
	}
}

// bytes returns an empty buffer of capacity n, from the slab while it has
// room (nil slab: none).
func (s *slab) bytes(n int) []byte {
	if b, ok := s.cut(n); ok {
		return b
	}
	return make([]byte, 0, n)
}

// cut takes n bytes from the slab, if it has room.
func (s *slab) cut(n int) ([]byte, bool) {
	if s == nil {
		return nil, false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	at := s.used
	if len(s.mem)-at < n {
		return nil, false
	}
	s.used += (n + 7) &^ 7 // the next stays aligned for slabSlice
	return s.mem[at : at : at+n], true
}

// slabSlice returns an empty slice of capacity n of T, a type that holds no
// pointer (the slab's memory is not scanned by the garbage collector), from
// s while it has room.
func slabSlice[T any](s *slab, n int) []T {
	var zero T
	if b, ok := s.cut(n * int(unsafe.Sizeof(zero))); ok && n > 0 {
		return unsafe.Slice((*T)(unsafe.Pointer(unsafe.SliceData(b[:1]))), n)[:0]
	}
	return make([]T, 0, n)
}
