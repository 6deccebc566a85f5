//go:build !linux

// Package pipebuf enlarges the kernel buffers of the pipes a process
// streams through.
package pipebuf

// Size is the buffer a process uses to read and write a stream.
const Size = 1 << 20

// Grow does nothing where pipe buffers cannot be resized.
func Grow(v any) {}
