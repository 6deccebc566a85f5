package workspace

import "golang.org/x/sys/unix"

// fineGrainedTimes reports whether the file system root is on keeps times
// to the nanosecond, set from the kernel's clock (a step of at most 10
// ms): ext4, XFS, Btrfs, tmpfs, overlayfs, F2FS. Others (FAT's two
// seconds, a network file system's server clock) are not trusted.
func fineGrainedTimes(root string) bool {
	var fs unix.Statfs_t
	if unix.Statfs(root, &fs) != nil {
		return false
	}
	switch uint32(fs.Type) {
	case unix.EXT4_SUPER_MAGIC, unix.XFS_SUPER_MAGIC, unix.BTRFS_SUPER_MAGIC, unix.TMPFS_MAGIC, unix.OVERLAYFS_SUPER_MAGIC, unix.F2FS_SUPER_MAGIC:
		return true
	}
	return false
}
