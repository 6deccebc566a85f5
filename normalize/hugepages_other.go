//go:build !linux

package normalize

// slabMemory returns n bytes for a slab: heap memory, where the kernel
// takes no advice on huge pages.
func slabMemory(n int) []byte { return make([]byte, n) }
