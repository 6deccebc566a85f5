package normalize

import (
	"unsafe"

	"golang.org/x/sys/unix"
)

// slabMemory returns n bytes (a multiple of hugePage) of memory mapped for
// a slab, aligned to hugePage, which the kernel is asked to back with
// transparent huge pages (honoured when
// /sys/kernel/mm/transparent_hugepage/enabled says "always" or "madvise";
// otherwise they are pages as any other). unmap returns the mapping to the
// system (nil for heap memory).
func slabMemory(n int) (mem []byte, unmap func()) {
	mapping, err := unix.Mmap(-1, 0, n+hugePage, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_ANON|unix.MAP_PRIVATE)
	if err != nil {
		return make([]byte, n), nil
	}
	mem = mapping
	off := int(-uintptr(unsafe.Pointer(unsafe.SliceData(mem))) & (hugePage - 1))
	// What lies outside the aligned range is never touched, and costs
	// address space only.
	mem = mem[off : off+n : off+n]
	unix.Madvise(mem, unix.MADV_HUGEPAGE)
	return mem, func() { unix.Munmap(mapping) }
}
