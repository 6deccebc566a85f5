package runner

import (
	"os"

	"golang.org/x/sys/unix"
)

// fileTakes reports whether n bytes written to f go through without the
// write waiting: f is a regular file, /dev/null, or a pipe with room for
// them. A pipe holds its bytes in page-sized slots, a slot holding the
// start of what is unread possibly in part, the last one open to more.
func fileTakes(f *os.File, n int64) bool {
	sc, err := f.SyscallConn()
	if err != nil {
		return false
	}
	takes := false
	sc.Control(func(fd uintptr) {
		var st unix.Stat_t
		if unix.Fstat(int(fd), &st) != nil {
			return
		}
		switch st.Mode & unix.S_IFMT {
		case unix.S_IFREG:
			takes = true
		case unix.S_IFCHR:
			takes = st.Rdev == unix.Mkdev(1, 3) // /dev/null
		case unix.S_IFIFO:
			size, err1 := unix.FcntlInt(fd, unix.F_GETPIPE_SZ, 0)
			unread, err2 := unix.IoctlGetInt(int(fd), unix.TIOCINQ) // FIONREAD: the bytes unread
			if err1 != nil || err2 != nil || size <= 0 || unread < 0 {
				return
			}
			page := int64(os.Getpagesize())
			used := int64(0)
			if unread > 0 {
				used = (int64(unread)+page-1)/page + 1
			}
			takes = n <= (int64(size)/page-used)*page
		}
	})
	return takes
}
