//go:build !linux

package normalize

// slabMemory returns n bytes for a slab: heap memory, where the kernel
// takes no advice on huge pages, and the garbage collector frees.
func slabMemory(n int) (mem []byte, unmap func()) { return make([]byte, n), nil }
