package index

import (
	"bytes"
	"encoding/binary"
	"os"
	"syscall"
)

// ext4Magic is ext4's file system magic number (statfs f_type).
const ext4Magic = 0xEF53

// listSplit returns the directory position at which dir's listing can be
// cut in two halves, listed at once by listDirRange: ext4 lists a large
// directory in the order of its names' hashes, its positions being the
// hashes (major<<32 | minor, the major halved), so half of the names lie on
// each side of 1<<62. Most of a listing's time goes to the kernel hashing each
// name; two cores halve it. Elsewhere positions are opaque: no split.
func listSplit(dir string) (int64, bool) {
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err != nil || st.Type != ext4Magic {
		return 0, false
	}
	return 1 << 62, true
}

// listDirRange calls fn with the name of each entry of dir at positions from
// from up to, not including, to (-1: to the end), and whether the directory
// says it is something other than a regular file or a link. The entries are
// read with getdents into one buffer, without a string, a sort or an
// os.DirEntry each: in a directory of 20 000 cassettes those cost more than
// the system calls. name is valid only during the call. In a directory
// ordered otherwise than by hash (an ext4 directory without an index lists
// by offset), the first range holds every entry and the second none.
func listDirRange(dir string, from, to int64, fn func(name []byte, notFile bool)) error {
	fd, err := syscall.Open(dir, syscall.O_RDONLY|syscall.O_DIRECTORY|syscall.O_CLOEXEC, 0)
	if err != nil {
		return &os.PathError{Op: "open", Path: dir, Err: err}
	}
	defer syscall.Close(fd)
	if from != 0 {
		if _, err := syscall.Seek(fd, from, 0); err != nil {
			return &os.PathError{Op: "seek", Path: dir, Err: err}
		}
	}
	buf := make([]byte, 32<<10)
	pos := from // the position of the next entry: the d_off of the one before
	for {
		n, err := syscall.Getdents(fd, buf)
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return &os.PathError{Op: "readdirent", Path: dir, Err: err}
		}
		if n <= 0 {
			return nil
		}
		// struct linux_dirent64: ino u64, off s64, reclen u16, type u8, name.
		for rec := buf[:n]; len(rec) >= 19; {
			if to >= 0 && pos >= to {
				return nil
			}
			reclen := int(binary.NativeEndian.Uint16(rec[16:]))
			if reclen < 19 || reclen > len(rec) {
				break
			}
			ino, typ, name := binary.NativeEndian.Uint64(rec), rec[18], rec[19:reclen]
			pos = int64(binary.NativeEndian.Uint64(rec[8:]))
			if i := bytes.IndexByte(name, 0); i >= 0 {
				name = name[:i]
			}
			rec = rec[reclen:]
			if ino == 0 || string(name) == "." || string(name) == ".." {
				continue
			}
			fn(name, typ != syscall.DT_REG && typ != syscall.DT_LNK && typ != syscall.DT_UNKNOWN)
		}
	}
}
