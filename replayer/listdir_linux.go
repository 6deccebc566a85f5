package replayer

import (
	"bytes"
	"encoding/binary"
	"os"
	"syscall"
)

// listDir calls fn with the name of each entry of dir and whether the
// directory says it is something other than a regular file or a link. On
// Linux the entries are read with getdents into one buffer, without a string,
// a sort or an os.DirEntry each: in a directory of 20 000 cassettes those cost
// more than the system calls. name is valid only during the call.
func listDir(dir string, fn func(name []byte, notFile bool)) error {
	fd, err := syscall.Open(dir, syscall.O_RDONLY|syscall.O_DIRECTORY|syscall.O_CLOEXEC, 0)
	if err != nil {
		return &os.PathError{Op: "open", Path: dir, Err: err}
	}
	defer syscall.Close(fd)
	buf := make([]byte, 64<<10)
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
			reclen := int(binary.NativeEndian.Uint16(rec[16:]))
			if reclen < 19 || reclen > len(rec) {
				break
			}
			ino, typ, name := binary.NativeEndian.Uint64(rec), rec[18], rec[19:reclen]
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
