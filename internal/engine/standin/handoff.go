package standin

import (
	"os"
	"path/filepath"
	"runtime"
)

// leanName is the lean stand-in's binary (cmd/agentvcr-standin), which
// replays and hands the rest to the agentvcr command.
const leanName = "agentvcr-standin"

// envHandedOff marks the environment of the agentvcr command the lean
// stand-in handed a call to, with the lean binary's path: that command
// knows it for a stand-in too when it looks for the real agent, and drops
// the mark before anything else reads the environment.
const envHandedOff = "AGENTVCR_HANDED_OFF_FROM"

// handedOffFrom is the lean stand-in that handed this process its call.
var handedOffFrom string

// handOff runs the call in the agentvcr command beside this binary (the
// release archives, npm and pip install them side by side), else the one
// in PATH, and returns its exit status; ok is false when there is none,
// and the call then goes on here (it fails where it needs to run the
// agent, saying so, and logged).
func handOff() (code int, ok bool) {
	self, err := os.Executable()
	if err != nil {
		return 0, false
	}
	if p, err := filepath.EvalSymlinks(self); err == nil {
		self = p
	}
	full := fullCommand(self)
	if full == "" {
		return 0, false
	}
	env := append(os.Environ(), envHandedOff+"="+self)
	return execFull(full, os.Args, env)
}

// fullCommand is the agentvcr command to hand a call to: beside self, else
// in PATH; never self, nor another lean stand-in.
func fullCommand(self string) string {
	exe := "agentvcr"
	if runtime.GOOS == "windows" {
		exe += ".exe"
	}
	candidates := []string{filepath.Join(filepath.Dir(self), exe)}
	for _, dir := range filepath.SplitList(os.Getenv("PATH")) {
		if filepath.IsAbs(dir) {
			candidates = append(candidates, filepath.Join(dir, exe))
		}
	}
	for _, path := range candidates {
		st, err := os.Stat(path)
		if err != nil || !st.Mode().IsRegular() || runtime.GOOS != "windows" && st.Mode()&0o111 == 0 {
			continue
		}
		if sameFile(path, self) {
			continue
		}
		if target, err := filepath.EvalSymlinks(path); err != nil || filepath.Base(target) == filepath.Base(self) {
			continue
		}
		return path
	}
	return ""
}
