package normalize

import (
	"syscall"
	"unsafe"
)

// madvHugePage is MADV_HUGEPAGE (asm-generic/mman-common.h).
const madvHugePage = 14

// slabMemory returns n bytes (a multiple of hugePage) of memory mapped for
// a slab, aligned to hugePage, which the kernel is asked to back with
// transparent huge pages (honoured when
// /sys/kernel/mm/transparent_hugepage/enabled says "always" or "madvise";
// otherwise they are pages as any other). It is never unmapped.
func slabMemory(n int) []byte {
	mem, err := syscall.Mmap(-1, 0, n+hugePage, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE)
	if err != nil {
		return make([]byte, n)
	}
	off := int(-uintptr(unsafe.Pointer(unsafe.SliceData(mem))) & (hugePage - 1))
	// What lies outside the aligned range is never touched, and costs
	// address space only.
	mem = mem[off : off+n : off+n]
	syscall.Madvise(mem, madvHugePage)
	return mem
}
