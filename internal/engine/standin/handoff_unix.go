//go:build unix

package standin

import "syscall"

// execFull replaces this process with the agentvcr command at path: the
// same process, so that signals, the parent's wait and the exit status are
// the caller's as they were; ok is false when exec failed, before anything
// changed.
func execFull(path string, argv, env []string) (code int, ok bool) {
	return 0, syscall.Exec(path, argv, env) == nil
}
