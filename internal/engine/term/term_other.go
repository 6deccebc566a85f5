//go:build !linux && !darwin && !freebsd && !netbsd && !openbsd

package term

import "os"

// IsTerminal reports whether f looks like a terminal (a character device).
func IsTerminal(f *os.File) bool {
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}
