//go:build windows

package standin

import (
	"io"
	"os"
	"path/filepath"
	"strings"
)

// Link puts the program exe in dir under the agent name, as NAME.exe,
// which exec.LookPath and the SDKs find through PATH and PATHEXT: a hard
// link (symbolic links need a privilege on Windows), or a copy where the
// two are on different volumes. It returns the path made.
func Link(exe, dir, name string) (string, error) {
	p := filepath.Join(dir, name+".exe")
	if os.Link(exe, p) == nil {
		return p, nil
	}
	src, err := os.Open(exe)
	if err != nil {
		return "", err
	}
	defer src.Close()
	dst, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o755)
	if err != nil {
		return "", err
	}
	if _, err := io.Copy(dst, src); err != nil {
		dst.Close()
		os.Remove(p)
		return "", err
	}
	return p, dst.Close()
}

// findProgram is the program name in dir as Windows finds it: name itself
// when it has an extension of PATHEXT's, else name with the first of them
// there is a file for.
func findProgram(dir, name string) (string, bool) {
	exts := filepath.SplitList(os.Getenv("PATHEXT"))
	if len(exts) == 0 {
		exts = []string{".com", ".exe", ".bat", ".cmd"}
	}
	candidates := []string{}
	for _, e := range exts {
		if strings.EqualFold(filepath.Ext(name), e) {
			candidates = append(candidates, name)
			break
		}
	}
	for _, e := range exts {
		candidates = append(candidates, name+strings.ToLower(e))
	}
	for _, c := range candidates {
		path := filepath.Join(dir, c)
		if st, err := os.Stat(path); err == nil && !st.IsDir() {
			return path, true
		}
	}
	return "", false
}
