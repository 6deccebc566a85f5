package recorder

import (
	"syscall"
)

// procAttr puts the agent in its own process group, so that a terminal's ^C
// reaches it once, through the forwarding, and asks the kernel to kill it when
// the recorder dies, so that a recorder killed by SIGKILL leaves no agent behind.
func procAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}
