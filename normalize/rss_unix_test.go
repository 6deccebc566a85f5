//go:build unix

package normalize

// peakRSSProgram runs the command of its arguments after the first, with
// its own stdin, stdout and stderr, and writes the command's peak RSS in
// KiB to the file its first argument names.
//
// A child that os/exec starts directly cannot be measured: on Linux it is
// started with vfork, and a process's peak RSS (rusage's maxrss) keeps the
// high-water mark of the memory it had before exec, which then is the
// parent's. A benchmark binary that ran larger benchmarks before would
// report its own peak as the child's. This program is small: what it
// passes on to the command it starts is below any normaliser's peak.
const peakRSSProgram = `package main

import (
	"os"
	"os/exec"
	"strconv"
	"syscall"
)

func main() {
	cmd := exec.Command(os.Args[2], os.Args[3:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	err := cmd.Run()
	if cmd.ProcessState == nil {
		os.Stderr.WriteString(err.Error() + "\n")
		os.Exit(2)
	}
	rss := cmd.ProcessState.SysUsage().(*syscall.Rusage).Maxrss
	if err := os.WriteFile(os.Args[1], []byte(strconv.FormatInt(int64(rss), 10)), 0o644); err != nil {
		os.Stderr.WriteString(err.Error() + "\n")
		os.Exit(2)
	}
	os.Exit(cmd.ProcessState.ExitCode())
}
`
