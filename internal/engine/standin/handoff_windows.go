//go:build windows

package standin

import (
	"errors"
	"os"
	"os/exec"
)

// execFull runs the agentvcr command at path on this process's streams
// (Windows has no exec) and returns its exit status; a console's Ctrl+C
// reaches both processes, and the child ends as the agent does.
func execFull(path string, argv, env []string) (code int, ok bool) {
	cmd := exec.Command(path, argv[1:]...)
	cmd.Args[0] = argv[0]
	cmd.Env = env
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	if err := cmd.Start(); err != nil {
		return 0, false
	}
	var exit *exec.ExitError
	if err := cmd.Wait(); errors.As(err, &exit) {
		return exit.ExitCode(), true
	} else if err != nil {
		return 2, true
	}
	return 0, true
}
