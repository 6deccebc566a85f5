package standin

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/agentvcr/agentvcr/internal/engine/safefile"
	"github.com/agentvcr/agentvcr/internal/engine/term"
)

// takeCounter is the count of a test's answered calls of one invocation:
// a small file beside the run log, one per key, locked while the call it
// numbered runs. Counting there rather than in the run log makes a call
// cost the same whether the test made ten calls before it or ten thousand,
// and the lock, on the counter itself, makes calls of one invocation at
// once, from any number of processes, take turns, while calls of other
// invocations go ahead.
type takeCounter struct {
	f      *os.File
	runLog string
	// answered is the calls of the invocation answered before this one.
	answered int
}

// takesDir is the directory beside the run log at runLog where the
// stand-in counts each invocation's answered calls.
func takesDir(runLog string) string { return runLog + ".takes" }

// openTakeCounter locks the counter of key's calls logged at runLog,
// waiting for a call of it under way, and reads it. A count made against
// another run log than the one there now (the log removed, replaced or cut
// short since) is no count: takes start again with the log.
func openTakeCounter(runLog, key string) (*takeCounter, error) {
	dir, err := makeTakesDir(takesDir(runLog))
	if err != nil {
		return nil, fmt.Errorf("counting takes: %w", err)
	}
	// Never through a link, nor into a file with other names: the key is
	// in cassette names and the index, so a link planted at it would have
	// the count truncate and overwrite any file.
	f, err := safefile.OpenWrite(filepath.Join(dir, key), os.O_CREATE|os.O_RDWR, 0o666)
	if err != nil {
		return nil, fmt.Errorf("counting takes: %w", err)
	}
	if err := safefile.Flock(f); err != nil {
		f.Close()
		return nil, fmt.Errorf("counting takes: %w", err)
	}
	tc := &takeCounter{f: f, runLog: runLog}
	buf := make([]byte, 80)
	n, err := f.ReadAt(buf, 0)
	if err != nil && err != io.EOF {
		f.Close()
		return nil, fmt.Errorf("counting takes: %w", err)
	}
	var count int
	var id logIdentity
	if _, err := fmt.Sscanf(string(buf[:n]), "%d %d %d %d", &count, &id.dev, &id.ino, &id.size); err == nil && count > 0 {
		if now, ok := identify(runLog); ok && now.dev == id.dev && now.ino == id.ino && now.size >= id.size {
			tc.answered = count
		}
	}
	return tc, nil
}

// makeTakesDir makes the directory of take counters at dir, or finds it:
// a directory of its own, never a symbolic link to one elsewhere.
func makeTakesDir(dir string) (string, error) {
	err := os.Mkdir(dir, 0o777)
	if err != nil && !errors.Is(err, fs.ErrExist) {
		return "", err
	}
	st, err := os.Lstat(dir)
	if err != nil {
		return "", err
	}
	if st.Mode()&fs.ModeSymlink != 0 {
		return "", fmt.Errorf("%s %w: remove it", term.Visible(dir), safefile.ErrLink)
	}
	if !st.IsDir() {
		return "", fmt.Errorf("%s is not a directory: remove it", term.Visible(dir))
	}
	return dir, nil
}

// release ends the call the counter numbered, once it is logged: an
// answered call (replayed or recorded) counts, and the next call of the
// invocation may go.
func (tc *takeCounter) release(answered bool) {
	defer tc.f.Close()
	if !answered {
		return
	}
	id, ok := identify(tc.runLog)
	if !ok {
		return // the call is not in a log: it does not count
	}
	line := fmt.Sprintf("%d %d %d %d\n", tc.answered+1, id.dev, id.ino, id.size)
	if tc.f.Truncate(0) == nil {
		tc.f.WriteAt([]byte(line), 0)
	}
}

// logIdentity says which run log a count was made against: the file, and
// how long it was then (a log only grows).
type logIdentity struct {
	dev, ino uint64
	size     int64
}

func identify(path string) (logIdentity, bool) {
	st, err := os.Lstat(path)
	if err != nil || !st.Mode().IsRegular() {
		return logIdentity{}, false
	}
	dev, ino, ok := fileID(path, st)
	if !ok {
		return logIdentity{}, false
	}
	return logIdentity{dev: dev, ino: ino, size: st.Size()}, true
}
