//go:build !linux

package asyncio

// GrowPipe does nothing where pipe buffers cannot be resized.
func GrowPipe(v any) {}
