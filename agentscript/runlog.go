package agentscript

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/agentvcr/agentvcr/cassette"
	"github.com/agentvcr/agentvcr/internal/cli"
	"github.com/agentvcr/agentvcr/replayer"
)

// agentRun is one run of the stand-in (or of "agentvcr replay") in a script,
// as the wrappers log it: testscript keeps the last exec's stdout and stderr
// but not its exit status, nor which cassette played.
type agentRun struct {
	Argv []string `json:"argv"`
	Code int      `json:"code"`
	// Cassette is the absolute path of the cassette replayed or recorded,
	// "" for a passthrough run or a miss.
	Cassette string `json:"cassette,omitempty"`
	// Recorded is set when this run wrote Cassette (record or once mode).
	Recorded bool   `json:"recorded,omitempty"`
	Mode     string `json:"mode,omitempty"`
}

// standinMain is the "cursor-agent" program: the agentvcr stand-in, which
// also logs its run when a script's setup asked for it.
func standinMain() {
	logPath := os.Getenv(envRunLog)
	if logPath == "" {
		os.Exit(cli.Main())
	}
	sha, err := spoolStdin()
	if err != nil {
		fmt.Fprintf(os.Stderr, "cursor-agent (agentvcr stand-in): reading stdin: %v\n", err)
		os.Exit(cli.ExitUsage)
	}
	start := time.Now()
	code := cli.Main()
	mode, _ := cli.ParseMode(os.Getenv(cli.EnvMode))
	run := agentRun{Argv: os.Args, Code: code, Mode: string(mode)}
	dir := os.Getenv(cli.EnvCassettes)
	if mode != cli.ModePassthrough {
		run.Cassette = matchedCassette(dir, os.Args[1:], sha)
	}
	if st, err := os.Stat(run.Cassette); err == nil && run.Cassette != "" && !st.ModTime().Before(start) {
		run.Recorded = true
	}
	if run.Cassette == "" && code == cli.ExitUsage && mode == cli.ModeReplay && dir != "" {
		missHint(os.Stderr, dir, os.Args[1:], sha)
	}
	appendRun(logPath, run)
	os.Exit(code)
}

// agentvcrMain is the "agentvcr" program; "agentvcr replay" runs are logged
// like stand-in runs, so that validate and golden know their cassette.
func agentvcrMain() {
	code := cli.Main()
	logPath := os.Getenv(envRunLog)
	if logPath != "" && len(os.Args) > 2 && os.Args[1] == "replay" {
		file, err := filepath.Abs(os.Args[len(os.Args)-1])
		if err == nil && isCassette(file) {
			appendRun(logPath, agentRun{Argv: os.Args, Code: code, Cassette: file, Mode: "agentvcr replay"})
		}
	}
	os.Exit(code)
}

// spoolStdin copies piped stdin to an unlinked temporary file that replaces
// os.Stdin, and returns the digest the stand-in matches cassettes on.
func spoolStdin() (string, error) {
	st, err := os.Stdin.Stat()
	if err != nil || st.Mode()&os.ModeCharDevice != 0 {
		return "", nil // a terminal or no stdin: the stand-in reads nothing either
	}
	f, err := os.CreateTemp("", "agentscript-stdin-*")
	if err != nil {
		return "", err
	}
	os.Remove(f.Name())
	h := sha256.New()
	if _, err := io.Copy(io.MultiWriter(f, h), os.Stdin); err != nil {
		f.Close()
		return "", err
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		f.Close()
		return "", err
	}
	os.Stdin = f
	return hex.EncodeToString(h.Sum(nil)), nil
}

// matchedCassette finds the cassette in dir recorded for args, as the
// stand-in matched (or recorded) it.
func matchedCassette(dir string, args []string, stdinSHA string) string {
	if dir == "" {
		return ""
	}
	cwd, _ := os.Getwd()
	inv := replayer.NewInvocation(args, cwd, os.Getenv("HOME"), stdinSHA)
	lib, err := replayer.OpenLibrary(dir)
	if err != nil {
		return ""
	}
	e, ok := lib.Lookup(inv)
	if !ok || !replayer.Verify(e, inv) {
		if lib.Rescan() != nil {
			return ""
		}
		if e, ok = lib.Lookup(inv); !ok {
			return ""
		}
	}
	abs, err := filepath.Abs(e.File)
	if err != nil {
		return e.File
	}
	return abs
}

// missHint tells, after the stand-in's own message, where the cassette for
// this call would be and how to make it.
func missHint(w io.Writer, dir string, args []string, stdinSHA string) {
	cwd, _ := os.Getwd()
	inv := replayer.NewInvocation(args, cwd, os.Getenv("HOME"), stdinSHA)
	fmt.Fprintf(w, "agentscript: looked for a cassette recorded for this call in %s; a recording would be saved as %s "+
		"(AGENTVCR_MODE=once AGENTVCR_REAL_AGENT=cursor-agent go test ...)\n",
		dir, filepath.Join(dir, inv.FileName()))
}

func appendRun(path string, run agentRun) {
	js, err := json.Marshal(run)
	if err != nil {
		return
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o666)
	if err != nil {
		fmt.Fprintf(os.Stderr, "agentscript: cannot log the run: %v\n", err)
		return
	}
	defer f.Close()
	f.Write(append(js, '\n')) // one write: concurrent runs do not interleave
}

// errNoRun: the script ran no agent before a command that needs one.
var errNoRun = errors.New("no agent run yet: exec cursor-agent (or agentvcr replay) first")

// readRuns reads the runs a script logged, in order.
func readRuns(path string) ([]agentRun, error) {
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var runs []agentRun
	br := bufio.NewReader(f)
	for {
		line, err := br.ReadBytes('\n')
		if len(bytes.TrimSpace(line)) > 0 {
			var r agentRun
			if jerr := json.Unmarshal(line, &r); jerr != nil {
				return runs, fmt.Errorf("%s: %w", path, jerr)
			}
			runs = append(runs, r)
		}
		if err == io.EOF {
			return runs, nil
		}
		if err != nil {
			return runs, err
		}
	}
}

// lastRun is the script's most recent agent run.
func lastRun(runLog string) (agentRun, error) {
	runs, err := readRuns(runLog)
	if err != nil {
		return agentRun{}, err
	}
	if len(runs) == 0 {
		return agentRun{}, errNoRun
	}
	return runs[len(runs)-1], nil
}

// header reads the header of the run's cassette; ok is false without one.
func (r agentRun) header() (cassette.Header, bool, error) {
	if r.Cassette == "" {
		return cassette.Header{}, false, nil
	}
	rd, f, err := cassette.Open(r.Cassette)
	if err != nil {
		return cassette.Header{}, false, err
	}
	f.Close()
	return rd.Header(), true, nil
}

// isCassette reports whether the file at path starts like a cassette.
func isCassette(path string) bool {
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	return cassette.Sniff(bufio.NewReader(f))
}
