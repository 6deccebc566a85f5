//go:build unix && !linux

package recorder

import (
	"syscall"
)

// procAttr puts the agent in its own process group, so that a terminal's ^C
// reaches it once, through the forwarding. Only Linux has a parent-death
// signal: elsewhere an agent whose recorder was killed by SIGKILL runs on.
func procAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}
