package index_test

import (
	"fmt"
	"github.com/agentvcr/agentvcr/internal/testsupport/vcrtest"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agentvcr/agentvcr/cassette"
	"github.com/agentvcr/agentvcr/internal/engine/index"
)

// putIncomplete writes a cassette of args without its footer, as a recorder
// killed half-way leaves it.
func putIncomplete(t *testing.T, path string, args ...string) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	w, err := cassette.NewWriter(f, cassette.Header{Argv: append([]string{"cursor-agent"}, args...), Cwd: "/w", Home: "/h"})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.WriteChunk(cassette.Stdout, 0, []byte("partial\n")); err != nil {
		t.Fatal(err)
	}
}

// resolve is what the stand-in replays for inv without a rescan: the
// looked-up cassette if its header still records inv, else "-".
func resolve(lib *index.Library, inv index.Invocation) string {
	if e, ok := lib.Lookup(inv); ok && index.Verify(e, inv) {
		return filepath.Base(e.File)
	}
	return "-"
}

// Whatever happens to a directory between two calls, the index brought up to
// date from the previous one answers as a full scan of the directory does:
// cassettes added, removed, renamed, recorded twice (complete or not), junk
// files, a FIFO, and (in the second run) cassettes rewritten in place for
// another call, which only the lookup's verification catches: then a call
// recorded twice may replay either recording, and a miss is answered by the
// stand-in's rescan.
func TestLibraryUpdateMatchesScan(t *testing.T) {
	for _, tc := range []struct {
		rewrites bool
		minDelta int // 0: most updates write the whole index
	}{{false, 256}, {false, 0}, {true, 256}, {true, 0}} {
		rewrites := tc.rewrites
		t.Run(fmt.Sprintf("rewrites=%v,minDelta=%d", rewrites, tc.minDelta), func(t *testing.T) {
			defer index.SetMinDelta(tc.minDelta)()
			cache, aside := t.TempDir(), t.TempDir()
			t.Setenv("AGENTVCR_CACHE", cache)
			dir := t.TempDir()
			rng := rand.New(rand.NewPCG(1, uint64(len(fmt.Sprint(rewrites))+tc.minDelta)))
			calls := make([]index.Invocation, 64)
			for i := range calls {
				calls[i] = call("--print", fmt.Sprintf("prompt %d", i))
			}
			files := func() []string {
				m, _ := filepath.Glob(filepath.Join(dir, "*.cassette"))
				return m
			}
			stamp := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
			// 50 steps reach every branch of the index that 150 reach
			// (go test -coverprofile); each step costs more as the
			// directory fills.
			for step := range 50 {
				n := rng.IntN(len(calls))
				name := fmt.Sprintf("c%03d.cassette", rng.IntN(100))
				path := filepath.Join(dir, name)
				switch op := rng.IntN(10); {
				case op < 4: // a new recording, maybe of a call already recorded
					if taken(path) && !rewrites {
						continue
					}
					tmp := filepath.Join(dir, ".tmp")
					if rng.IntN(4) == 0 {
						putIncomplete(t, tmp, calls[n].Args...)
					} else {
						putCassette(t, dir, ".tmp", "", calls[n].Args...)
					}
					os.Rename(tmp, path)
				case op < 6:
					if fs := files(); len(fs) > 0 {
						os.Remove(fs[rng.IntN(len(fs))])
					}
				case op < 7:
					if fs := files(); len(fs) > 0 && (rewrites || !taken(path)) {
						os.Rename(fs[rng.IntN(len(fs))], path)
					}
				case op < 8:
					junk := rng.IntN(3)
					if taken(path) && !rewrites && junk != 2 {
						continue // a FIFO may take a cassette's place
					}
					switch junk {
					case 0:
						os.WriteFile(path, []byte("agentvcr cassette v9\n{}\n"), 0o644)
					case 1:
						os.WriteFile(filepath.Join(dir, name+".txt"), nil, 0o644)
					case 2:
						os.Remove(path)
						vcrtest.Mkfifo(path, 0o644)
					}
				default:
					if fs := files(); rewrites && len(fs) > 0 {
						f := fs[rng.IntN(len(fs))]
						putCassette(t, dir, ".tmp", "", calls[n].Args...)
						os.Rename(filepath.Join(dir, ".tmp"), f)
					}
				}
				// Changes within one tick of the file system's clock leave the
				// directory's time as it was; each step is made a tick of its own.
				stamp = stamp.Add(time.Second)
				os.Chtimes(dir, stamp, stamp)

				inc, err := index.OpenLibrary(dir)
				if err != nil {
					t.Fatal(err)
				}
				// The full scan keeps its index aside, so that each step
				// brings up to date the index the step before left.
				t.Setenv("AGENTVCR_CACHE", aside)
				full, _ := index.OpenLibrary(dir)
				if err := full.Rescan(); err != nil {
					t.Fatal(err)
				}
				t.Setenv("AGENTVCR_CACHE", cache)
				// The next call finds the index fresh: it searches the
				// index's file, changed by a delta, if any.
				again, err := index.OpenLibrary(dir)
				if err != nil {
					t.Fatal(err)
				}
				// What the full scan answers, asked once for both
				// libraries below (each answer re-reads headers).
				// Lookups first: Entries turns a library into entries.
				wantDups, wantReplays := make([]string, len(calls)), make([]string, len(calls))
				for i, inv := range calls {
					if !rewrites {
						wantDups[i] = fmt.Sprint(base(full.Duplicates(inv.Key())))
					}
					wantReplays[i] = resolve(full, inv)
				}
				for _, lib := range []struct {
					name string
					*index.Library
				}{{"brought up to date", inc}, {"fresh", again}} {
					for i, inv := range calls {
						if !rewrites {
							dups := fmt.Sprint(base(lib.Duplicates(inv.Key())))
							if want := wantDups[i]; dups != want {
								t.Fatalf("step %d: %s: call %d: duplicates %s, want %s", step, lib.name, i, dups, want)
							}
						}
						got, want := resolve(lib.Library, inv), wantReplays[i]
						if rewrites && (got != "-" && want != "-" || got == "-") {
							// A stale index may pick another of two
							// recordings of the call, which resolve has
							// verified, or miss one, and the stand-in rescans.
							continue
						}
						if got != want {
							t.Fatalf("step %d: %s: call %d replays %s, want %s", step, lib.name, i, got, want)
						}
					}
					if !rewrites {
						if got, want := entryList(lib.Library), entryList(full); got != want {
							t.Fatalf("step %d: %s: entries\n%s\nwant\n%s", step, lib.name, got, want)
						}
					}
				}
				if !rewrites {
					if got, want := len(inc.Unreadable), len(full.Unreadable); got != want {
						t.Fatalf("step %d: %d unreadable, want %d", step, got, want)
					}
					// The index left for the next call knows every cassette,
					// so that the next call reads no header again.
					_, body := indexFile(t, cache)
					var indexed []string
					for line := range strings.Lines(body) {
						indexed = append(indexed, strings.Split(line, "\t")[1])
					}
					slices.Sort(indexed)
					var want []string
					for _, e := range full.Entries() {
						want = append(want, filepath.Base(e.File))
					}
					if !slices.Equal(indexed, want) {
						t.Fatalf("step %d: the index saved names %q, want %q", step, indexed, want)
					}
				}
			}
		})
	}
}

// taken reports whether path exists: replacing it is a rewrite under the
// same name.
func taken(path string) bool {
	_, err := os.Lstat(path)
	return err == nil
}

func entryList(lib *index.Library) string {
	var b strings.Builder
	for _, e := range lib.Entries() {
		fmt.Fprintf(&b, "%s %s\n", filepath.Base(e.File), e.Key)
	}
	return b.String()
}

func base(files []string) []string {
	var out []string
	for _, f := range files {
		out = append(out, filepath.Base(f))
	}
	slices.Sort(out)
	return out
}

// indexFile returns what the cached index in cache says, read as the
// format describes it: the directory stamp it is fresh for and its lines
// ("KEY\tFILE\tSIZE\tMTIME"), the index's own or, where a delta names the
// index, the index's changed by the delta.
func indexFile(t *testing.T, cache string) (stamp, body string) {
	t.Helper()
	all, _ := filepath.Glob(filepath.Join(cache, "index-*"))
	idx := slices.DeleteFunc(all, func(f string) bool { return strings.HasSuffix(f, ".delta") })
	if len(idx) != 1 {
		t.Fatalf("index files in the cache: %q", idx)
	}
	data, err := os.ReadFile(idx[0])
	if err != nil {
		t.Fatal(err)
	}
	first, body, _ := strings.Cut(string(data), "\n")
	head := strings.Fields(first) // agentvcr-index v5 STAMP ID
	if len(head) != 4 {
		t.Fatalf("index head %q", first)
	}
	delta, err := os.ReadFile(idx[0] + ".delta")
	if err != nil {
		return head[2], body
	}
	dfirst, dbody, _ := strings.Cut(string(delta), "\n")
	dhead := strings.Fields(dfirst) // agentvcr-index-delta v1 STAMP ID
	if len(dhead) != 4 || dhead[3] != head[3] {
		return head[2], body // names another index: unused
	}
	removed := map[string]bool{}
	var lines []string
	for line := range strings.Lines(dbody) {
		switch line[0] {
		case '-':
			removed[strings.TrimSuffix(line[1:], "\n")] = true
		case '+':
			lines = append(lines, line[1:])
		}
	}
	for line := range strings.Lines(body) {
		if !removed[strings.Split(line, "\t")[1]] {
			lines = append(lines, line)
		}
	}
	return dhead[2], strings.Join(lines, "")
}

// RefreshIndex leaves the index fresh for the directory as it is, so that
// the next call does not list it; where nothing was indexed it makes no index.
func TestRefreshIndex(t *testing.T) {
	cache := t.TempDir()
	t.Setenv("AGENTVCR_CACHE", cache)
	dir := t.TempDir()
	index.RefreshIndex(dir)
	if idx, _ := filepath.Glob(filepath.Join(cache, "index-*")); len(idx) != 0 {
		t.Fatalf("RefreshIndex made an index of a directory never opened: %q", idx)
	}
	putCassette(t, dir, "a.cassette", "", "one")
	aged(t, dir)
	if _, err := index.OpenLibrary(dir); err != nil {
		t.Fatal(err)
	}
	putCassette(t, dir, "b.cassette", "", "two")
	later := time.Date(2025, 6, 7, 8, 9, 10, 11, time.UTC)
	os.Chtimes(dir, later, later)
	index.RefreshIndex(dir)
	stamp, body := indexFile(t, cache)
	if stamp != fmt.Sprint(later.UnixNano()) || !strings.Contains(body, "\tb.cassette\t") || !strings.Contains(body, "\ta.cassette\t") {
		t.Errorf("index after RefreshIndex: stamp %s (directory %d)\n%s", stamp, later.UnixNano(), body)
	}
}

// A rescan caches what it found, with the directory's stamp: a change the
// index missed is paid for once.
func TestRescanSavesIndex(t *testing.T) {
	cache := t.TempDir()
	t.Setenv("AGENTVCR_CACHE", cache)
	dir := t.TempDir()
	putCassette(t, dir, "a.cassette", "", "one")
	aged(t, dir)
	if _, err := index.OpenLibrary(dir); err != nil {
		t.Fatal(err)
	}
	// Added within the same tick: the directory's time does not move.
	putCassette(t, dir, "b.cassette", "", "two")
	aged(t, dir)
	lib, err := index.OpenLibrary(dir)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := lib.Lookup(call("two")); ok {
		t.Fatal("the stale index already knows b.cassette: the test sets nothing up")
	}
	if err := lib.Rescan(); err != nil {
		t.Fatal(err)
	}
	lib, err = index.OpenLibrary(dir)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := lib.Lookup(call("two")); !ok {
		t.Error("the index cached by Rescan does not know b.cassette")
	}
}

// A delta is used only with the index it names: one left beside a newer
// index (a stand-in killed between writing the index and removing the old
// delta) is ignored, however fresh its stamp.
func TestStaleDeltaIgnored(t *testing.T) {
	cache := t.TempDir()
	t.Setenv("AGENTVCR_CACHE", cache)
	dir := t.TempDir()
	tick := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	open := func() *index.Library {
		t.Helper()
		tick = tick.Add(time.Second)
		os.Chtimes(dir, tick, tick)
		lib, err := index.OpenLibrary(dir)
		if err != nil {
			t.Fatal(err)
		}
		return lib
	}
	putCassette(t, dir, "a.cassette", "", "a")
	putCassette(t, dir, "b.cassette", "", "b")
	open()
	putCassette(t, dir, "c.cassette", "", "c")
	open()
	all, _ := filepath.Glob(filepath.Join(cache, "index-*.delta"))
	if len(all) != 1 {
		t.Fatalf("no delta written for one change: %q", all)
	}
	stale, _ := os.ReadFile(all[0])

	defer index.SetMinDelta(0)()
	os.Remove(filepath.Join(dir, "c.cassette"))
	putCassette(t, dir, "d.cassette", "", "d")
	open() // two changes in three cassettes: a new index
	if _, err := os.Stat(all[0]); err == nil {
		t.Fatal("the delta of the replaced index is still there")
	}
	// The stale delta comes back, stamped with the directory's time.
	head, rest, _ := strings.Cut(string(stale), "\n")
	f := strings.Fields(head)
	f[2] = fmt.Sprint(tick.UnixNano())
	os.WriteFile(all[0], []byte(strings.Join(f, " ")+"\n"+rest), 0o644)

	fresh, err := index.OpenLibrary(dir)
	if err != nil {
		t.Fatal(err)
	}
	if e, ok := fresh.Lookup(call("c")); ok {
		t.Errorf("fresh index: the stale delta's %s is found", e.File)
	}
	if got := entryList(fresh); strings.Contains(got, "c.cassette") || !strings.Contains(got, "d.cassette") {
		t.Errorf("fresh index: entries\n%s", got)
	}
	// A cassette of another call under the name the stale delta added.
	putCassette(t, dir, "c.cassette", "", "c2")
	lib := open()
	if e, ok := lib.Lookup(call("c2")); !ok || filepath.Base(e.File) != "c.cassette" {
		t.Errorf("index brought up to date: Lookup(c2) = %v, %v", e.File, ok)
	}
	if e, ok := lib.Lookup(call("c")); ok {
		t.Errorf("index brought up to date: the stale delta's %s is found", e.File)
	}
}

// The committed index is rewritten only when what it says changes: a run
// that records nothing new leaves the file as it was (same inode, same
// time), so it shows in no git status; a new cassette does rewrite it.
func TestCommittedIndexRewrittenOnlyOnChange(t *testing.T) {
	t.Setenv("AGENTVCR_CACHE", t.TempDir())
	dir := t.TempDir()
	putIncomplete(t, filepath.Join(dir, "a.cassette"), "--print", "a")
	if err := index.WriteCommitted(dir); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, index.CommittedName)
	before, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	old := time.Unix(1_000_000_000, 0)
	os.Chtimes(path, old, old)
	if err := index.WriteCommitted(dir); err != nil {
		t.Fatal(err)
	}
	after, _ := os.Stat(path)
	if !os.SameFile(before, after) || !after.ModTime().Equal(old) {
		t.Errorf("unchanged index rewritten: inode same %v, mtime %v", os.SameFile(before, after), after.ModTime())
	}
	putIncomplete(t, filepath.Join(dir, "b.cassette"), "--print", "b")
	if err := index.WriteCommitted(dir); err != nil {
		t.Fatal(err)
	}
	if data, _ := os.ReadFile(path); !strings.Contains(string(data), "b.cassette") {
		t.Errorf("new cassette not in the index:\n%s", data)
	}
}
