package standin

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"syscall"

	"github.com/agentvcr/agentvcr/internal/engine/safefile"
	"github.com/agentvcr/agentvcr/internal/engine/term"
)

// Outcome says what a call did.
type Outcome string

const (
	Replayed    Outcome = "replayed"    // a cassette answered it
	Recorded    Outcome = "recorded"    // the real agent ran and its cassette was saved
	Passthrough Outcome = "passthrough" // the real agent ran, nothing was saved
	Failed      Outcome = "failed"      // the stand-in could not answer: see Call.Error
	Rerun       Outcome = "rerun"       // the real agent ran against the recorded model, nothing was saved
)

// Call is one line of the run log: what one call of the stand-in (or one
// "agentvcr replay") did.
type Call struct {
	// Agent is the name it was called under ("cursor-agent"), or
	// "agentvcr replay".
	Agent string `json:"agent"`
	// Args are the arguments after the name as they were matched: redacted,
	// the working and home directories as $CWD and $HOME.
	Args []string `json:"args"`
	// Key is the invocation's key (see index.Invocation.Key), "" when the
	// call failed before it had one.
	Key  string `json:"key,omitempty"`
	Mode Mode   `json:"mode,omitempty"`
	// Fault is $AGENTVCR_FAULT when it was set: the words the replay
	// applied (a live run is not faulted).
	Fault string `json:"fault,omitempty"`
	// Cassette is the absolute path of the cassette replayed or recorded.
	Cassette string  `json:"cassette,omitempty"`
	Outcome  Outcome `json:"outcome"`
	// Effects are the paths of the recorded file changes applied.
	Effects []string `json:"effects,omitempty"`
	Code    int      `json:"code"`
	// Error is the line the stand-in printed when it failed, or when it ran
	// the agent but could not save its cassette: what went wrong and, when
	// it is known, how to fix it.
	Error string `json:"error,omitempty"`
	// Take is which recording of its invocation the call replayed or
	// recorded when the test made it more than once: 1, 2, ...; 0 for a
	// cassette from before takes.
	Take int `json:"take,omitempty"`
	// Missing is, for a call no cassette records, where a recording of it
	// would be saved.
	Missing string `json:"missing,omitempty"`
	// Notes are the lines the stand-in printed about a call that did not
	// fail it (file changes applied inside a Go module), for a harness to
	// show: the code under test may keep the stand-in's stderr to itself.
	Notes []string `json:"notes,omitempty"`
	// Parent is the id of the process that ran the stand-in: a harness
	// that ran it itself has shown its stderr already.
	Parent int `json:"parent,omitempty"`
	// Cwd, Home and TempDir are, for a replay that relocated its output,
	// the directories the output names instead of the recording's (the
	// call's own; see $AGENTVCR_RELOCATE): a harness normalises them, not
	// the cassette header's. Empty when the recorded bytes were played.
	// Hint is how to fix what Error says, when it is known (Error ends
	// with it too): a harness rewording a failure keeps it apart.
	Hint string `json:"hint,omitempty"`
	// Closest is, for a call no cassette records, the cassette whose call
	// differs least from it.
	Closest string `json:"closest,omitempty"`
	Cwd     string `json:"cwd,omitempty"`
	Home    string `json:"home,omitempty"`
	TempDir string `json:"tmp,omitempty"`
}

// The run log's bounds: a line is one call (its arguments, a line of
// error), and a log holds one test's calls. A log past them was not
// written by the stand-in. maxLogLine is a variable only for the tests,
// which show the bound with a smaller one.
var maxLogLine = 64 << 20

const maxLog = 1 << 30

// AppendLog appends c to the run log at path, in one write, so that calls
// logging at once do not interleave. The log is never written through a
// symbolic link, nor to a FIFO or device (see CheckLog).
func AppendLog(path string, c Call) error {
	line, err := json.Marshal(c)
	if err != nil {
		return err
	}
	f, err := safefile.OpenWrite(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o666)
	if err != nil {
		return err
	}
	_, err = f.Write(append(line, '\n'))
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// CheckLog says whether path can be a run log: a regular file or nothing
// yet. A FIFO would hang the call that logs (or the harness reading it), a
// device swallows the log and puts the take counters beside it
// (/dev/null.takes), and a symbolic link could point at any file.
func CheckLog(path string) error {
	if err := safefile.CheckRegular(path); err != nil {
		return fmt.Errorf("$%s: %w", EnvRunLog, err)
	}
	return nil
}

// LogSink is what $AGENTVCR_RUN_LOG names.
type LogSink int

const (
	// NoLog: nothing, or a place no log can go (a directory, a link to a
	// file, a FIFO nobody reads).
	NoLog LogSink = iota
	// FileLog: a regular file, or none yet: a harness's log, with the
	// take counters beside it.
	FileLog
	// StreamLog: a terminal, a pipe or a FIFO the user pointed the log at
	// (/dev/stderr, /dev/fd/3, a named pipe): each call writes its line
	// there, and counts no takes.
	StreamLog
)

// SortLog says what the run log at path is; for NoLog, the error says why
// no log can be written there. A stream is named on purpose by the user,
// so a link to one (/dev/stderr) is followed; a link to anything else
// never is.
func SortLog(path string) (LogSink, error) {
	st, err := os.Lstat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return FileLog, nil
	}
	if err != nil {
		return NoLog, fmt.Errorf("$%s: %w", EnvRunLog, err)
	}
	if st.Mode().IsRegular() {
		return FileLog, nil
	}
	if target, err := os.Stat(path); err == nil && isStream(target.Mode()) {
		return StreamLog, nil
	}
	return NoLog, CheckLog(path)
}

func isStream(m fs.FileMode) bool { return m&(fs.ModeNamedPipe|fs.ModeCharDevice) != 0 }

// WriteLog writes c to the run log at path, whatever it is (see SortLog):
// appended to a file, or written to a stream without waiting for a reader
// that is not there.
func WriteLog(path string, c Call) error {
	sink, err := SortLog(path)
	switch sink {
	case FileLog:
		return AppendLog(path, c)
	case StreamLog:
		return writeStream(path, c)
	}
	return err
}

func writeStream(path string, c Call) error {
	line, err := json.Marshal(c)
	if err != nil {
		return err
	}
	// O_NONBLOCK: a FIFO with no reader is an error (ENXIO) at once, not a
	// wait; no O_CREATE: a stream is never made.
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|syscall.O_NONBLOCK|syscall.O_CLOEXEC, 0)
	if err != nil {
		if errors.Is(err, syscall.ENXIO) {
			return fmt.Errorf("$%s: %s: nobody reads it", EnvRunLog, term.Visible(path))
		}
		return fmt.Errorf("$%s: %w", EnvRunLog, err)
	}
	defer f.Close()
	if st, err := f.Stat(); err != nil || !isStream(st.Mode()) {
		return fmt.Errorf("$%s: %s: no longer a terminal or pipe", EnvRunLog, term.Visible(path))
	}
	if _, err := f.Write(append(line, '\n')); err != nil {
		return fmt.Errorf("$%s: %w", EnvRunLog, err)
	}
	return nil
}

// ReadLog reads the calls logged at path, in order; a log that does not
// exist holds none. A line that is not a call is an error naming it, as is
// a log that is not a regular file or is past its bounds (64 MiB a line,
// 1 GiB in all).
func ReadLog(path string) ([]Call, error) {
	f, err := safefile.OpenRegular(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return readLog(path, io.LimitReader(f, maxLog+1))
}

func readLog(path string, r io.Reader) ([]Call, error) {
	var calls []Call
	br := bufio.NewReader(r)
	var read int64
	for n := 1; ; n++ {
		line, err := readLine(br, maxLogLine)
		read += int64(len(line))
		if read > maxLog {
			return calls, fmt.Errorf("%s: longer than a run log can be (1 GiB): remove it", term.Visible(path))
		}
		if errors.Is(err, errLongLine) {
			return calls, fmt.Errorf("%s:%d: not a run log line: longer than %d MiB", term.Visible(path), n, maxLogLine>>20)
		}
		if len(line) > 0 {
			var c Call
			if jerr := json.Unmarshal(line, &c); jerr != nil {
				return calls, fmt.Errorf("%s:%d: not a run log line: %v", term.Visible(path), n, jerr)
			}
			calls = append(calls, c)
		}
		if err == io.EOF {
			return calls, nil
		}
		if err != nil {
			return calls, err
		}
	}
}

var errLongLine = errors.New("line too long")

// readLine reads a line, its newline included, of at most max bytes.
func readLine(br *bufio.Reader, max int) ([]byte, error) {
	var line []byte
	for {
		frag, err := br.ReadSlice('\n')
		if len(line)+len(frag) > max {
			return nil, errLongLine
		}
		line = append(line, frag...)
		if err != bufio.ErrBufferFull {
			return line, err
		}
	}
}
