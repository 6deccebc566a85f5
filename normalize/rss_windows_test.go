//go:build windows

package normalize

import "os"

// maxRSSKiB: Windows reports no peak memory of an ended child here.
func maxRSSKiB(ps *os.ProcessState) int64 { return 0 }
