// Package apply re-creates the file changes a cassette recorded (the
// replay side; package workspace records them): from a [Plan], the
// cassette read once, checked, its content spooled, applied under another
// directory through an os.Root, never through a link, never into .git,
// every file's content verified, all or nothing (staged, then committed by
// renames, and rolled back if that fails).
package apply

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"slices"
	"strconv"
	"strings"

	"github.com/agentvcr/agentvcr/cassette"
	"github.com/agentvcr/agentvcr/internal/engine/safefile"
	"github.com/agentvcr/agentvcr/internal/engine/workspace"
)

// Effects reads the file effects of the cassette at path, without their
// content.
func Effects(path string) ([]cassette.Effect, error) {
	rd, err := cassette.Open(path)
	if err != nil {
		return nil, err
	}
	defer rd.Close()
	rd.Effects = true
	var out []cassette.Effect
	for {
		c, err := rd.Next()
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return out, err
		}
		if c.Stream == cassette.Files && c.First {
			out = append(out, *c.Effect)
		}
	}
}

// More errors of Apply (ErrUnsafe and ErrConflict are with Snapshot's).
// ErrUnsafe is wrapped by errors about a path that would leave the directory
// or write through a link; ErrConflict by errors about files that are not as
// the agent found them.
var (
	ErrUnsafe   = errors.New("unsafe path")
	ErrConflict = errors.New("conflict")
)

var (
	// ErrContent: a file's staged content does not match its recorded size
	// and sha256.
	ErrContent = errors.New("content does not match the cassette")
	// ErrBlocked: a change cannot be made here whatever --force says (a
	// directory to remove holds other files, a name too long, a file
	// where a directory must go, a mode not ours to change).
	ErrBlocked = errors.New("cannot apply")
	// ErrInterrupted: a signal came before the changes were committed;
	// nothing was written.
	ErrInterrupted = errors.New("interrupted")
)

// ApplyOptions says how Apply treats conflicts and signals.
type ApplyOptions struct {
	// Force applies changes over files that are not as the agent found them
	// (unsafe paths, and changes that cannot be made, are refused all the
	// same). Default: refuse them all.
	Force bool
	// Signals, when not nil, is watched during Apply (give it a channel
	// registered with signal.Notify for SIGINT and SIGTERM): a signal before
	// the commit step stops Apply with nothing written (ErrInterrupted); one
	// during the commit lets it finish, and Result.Signal says so. Default:
	// signals are not watched.
	Signals <-chan os.Signal
	// Redact passes a file's content on redacted as the recorder did
	// (redact.Redactor.Uncounted().Writer): a recording keeps the digests
	// of redacted content only, so a file that holds a secret is known for
	// the one the agent saw through it. Default: files are compared as they
	// are, and one that held a secret when recorded reads as a conflict.
	Redact func(w io.Writer) io.WriteCloser
}

// Result is what Apply did.
type Result struct {
	// Applied lists the paths changed, in the order they were; a path
	// already as recorded is not listed.
	Applied []string
	// Signal is a signal that came while the changes were being committed:
	// they were all applied, then Apply returned. With ErrInterrupted, it is
	// the signal that stopped Apply before it wrote anything.
	Signal os.Signal
	// Stale counts temporary files of an earlier, killed Apply that were
	// removed.
	Stale int
}

// ApplyError is the error of an Apply that failed while committing: the
// changes made were rolled back, or, if that failed too, which paths are
// changed and which are not.
type ApplyError struct {
	Err        error
	RolledBack bool
	// When not rolled back: the paths left changed and those left as they
	// were, and what the rollback stumbled on.
	Applied, NotApplied []string
	RollbackErr         error
}

func (e *ApplyError) Error() string {
	if e.RolledBack {
		return fmt.Sprintf("%v; rolled back: the working directory is as it was", e.Err)
	}
	return fmt.Sprintf("%v; rolling back failed (%v): changed: %s; as before: %s", e.Err, e.RollbackErr, list(e.Applied), list(e.NotApplied))
}

func (e *ApplyError) Unwrap() error { return e.Err }

func list(paths []string) string {
	if len(paths) == 0 {
		return "nothing"
	}
	if len(paths) > 20 {
		return strings.Join(paths[:20], ", ") + fmt.Sprintf(" and %d more", len(paths)-20)
	}
	return strings.Join(paths, ", ")
}

// TempPrefix starts the name of every temporary file Apply makes (new
// content staged, originals kept until the commit is done): an Apply finds
// those an earlier one left when it was killed, and removes them.
const TempPrefix = ".agentvcr-apply-"

// Check reports whether the plan can be applied under root, writing
// nothing: every path safe (ErrUnsafe), every change possible (ErrBlocked)
// and, unless opts.Force, every file as the agent found it (ErrConflict).
// The error names every offending path. Apply checks again itself.
func Check(root string, p *Plan, opts ApplyOptions) error {
	if len(p.steps) == 0 {
		return nil
	}
	r, err := os.OpenRoot(root)
	if err != nil {
		return err
	}
	defer r.Close()
	a := newApplier(r, root, p, opts)
	defer a.handles.close()
	return a.check()
}

// Apply re-creates the plan's file effects under root, all or nothing:
//
//   - every path is resolved through an os.Root of root, so nothing outside
//     it is read or written, whatever links the tree or the plan holds;
//     links the plan makes must resolve inside root (judged by following
//     them, not by their text); nothing is written through a link; nothing
//     under .git, nor under what the recording ignored (its header's
//     Ignore), is touched;
//   - everything is checked first (see Check), then every new file is
//     staged beside its place and verified against its recorded size and
//     sha256, every file to replace or delete is kept (a hard link), and
//     only then are the changes committed, by renames; a directory made
//     where nothing is is staged whole under a temporary name, with what
//     the plan puts in it, and renamed into place at once; if the commit
//     fails half-way, what it did is undone from what was kept, and the
//     error says so (an *ApplyError);
//   - nothing is synced to disk (as tar -x): a crash of the machine may
//     leave a file short, which an Apply run again finds a conflict;
//   - applies serialise on root (a lock), and an Apply removes the
//     temporary files (TempPrefix) that a killed one left in the
//     directories it touches.
//
// Applying twice is harmless: paths already as recorded are left alone.
func Apply(root string, p *Plan, opts ApplyOptions) (*Result, error) {
	res := &Result{}
	if len(p.steps) == 0 {
		return res, nil
	}
	r, err := os.OpenRoot(root)
	if err != nil {
		return res, err
	}
	defer r.Close()
	unlock, err := lockDir(root)
	if err != nil {
		return res, err
	}
	defer unlock()
	a := newApplier(r, root, p, opts)
	defer a.handles.close()
	// Checked first: the directories swept are the plan's, and an unsafe
	// one (.git, an ignored one) is not touched at all.
	if err := a.check(); err != nil {
		return res, err
	}
	res.Stale = a.removeStale()
	if err := a.stage(); err != nil {
		a.handles.close()
		a.discard()
		res.Signal = a.signal
		return res, err
	}
	// The staged directories are renamed by the commit: none is held open
	// meanwhile (Windows refuses to rename a directory held open).
	a.handles.close()
	if err := a.commit(res); err != nil {
		return res, err
	}
	return res, nil
}

// ApplyFile reads the cassette at path once into a plan and applies it
// under root (see Apply).
func ApplyFile(root, path string, opts ApplyOptions) (*Result, error) {
	rd, err := cassette.Open(path)
	if err != nil {
		return &Result{}, err
	}
	defer rd.Close()
	p, err := ReadPlan(rd)
	if err != nil {
		return &Result{}, err
	}
	defer p.Close()
	return Apply(root, p, opts)
}

// lockDir takes an exclusive lock on the directory itself, released by
// unlock or when the process ends.
func lockDir(dir string) (unlock func(), err error) {
	f, err := os.Open(dir)
	if err != nil {
		return nil, err
	}
	if err := safefile.Flock(f); err != nil {
		f.Close()
		return nil, fmt.Errorf("locking %s: %w", dir, err)
	}
	return func() { f.Close() }, nil
}

// Kinds of what a path holds.
const (
	absent = iota
	isFile
	isDir
	isLink
	isOther
)

// node is what a path holds, now or once the plan is applied.
type node struct {
	kind   int
	mode   fs.FileMode
	target string // a link's
	uid    uint32
}

// Jobs: what the commit step does for a step.
const (
	jobNone   = iota
	jobPlace  // rename a staged file or link into place
	jobChmod  // change a file's mode
	jobDelete // remove a file or link
	jobRmdir  // remove a directory
	jobMkdir  // make a directory (explicit or a missing parent)
)

type job struct {
	kind   int
	path   string
	s      *step // nil for a missing parent directory
	mode   fs.FileMode
	old    node   // what the path held
	staged string // the new content or link beside its place; a new directory's temporary name
	backup string // the original, kept until the commit is done
	// inNew: a file, link or directory staged at its own name inside a
	// new directory, placed when that is renamed into place.
	inNew bool
}

type applier struct {
	r     *os.Root
	root  string
	p     *Plan
	opts  ApplyOptions
	token string

	making  map[string]*step     // the step that makes each path (file, dir, link)
	removes map[string]*step     // the step that removes each path
	parents map[string]bool      // directories the plan's paths need
	dirs    map[string]bool      // every directory above a path of the plan, and "."
	tree    map[string]node      // what paths hold now, as looked up
	sums    map[string][2]string // files' digests: as they are, redacted
	finals  map[string]node      // what they hold once applied
	jobs    []*job
	temps   []string  // staged files and backups, to remove
	made    []string  // new directories staged, under their temporary names
	signal  os.Signal // the signal that stopped the staging

	fresh   map[string]*job // the directories made where nothing is, staged whole
	handles dirHandles
}

func newApplier(r *os.Root, root string, p *Plan, opts ApplyOptions) *applier {
	a := &applier{r: r, root: root, p: p, opts: opts, making: map[string]*step{}, removes: map[string]*step{},
		parents: map[string]bool{}, dirs: map[string]bool{".": true}, tree: map[string]node{}, finals: map[string]node{}, sums: map[string][2]string{},
		fresh: map[string]*job{}, handles: dirHandles{root: r}}
	a.handles.removes = a.removes
	var rnd [6]byte
	if f, err := os.Open("/dev/urandom"); err == nil {
		io.ReadFull(f, rnd[:])
		f.Close()
	}
	a.token = strconv.Itoa(os.Getpid()) + "-" + hex.EncodeToString(rnd[:])
	for i := range p.steps {
		s := &p.steps[i]
		switch s.Op {
		case cassette.OpDelete, cassette.OpRmdir:
			a.removes[s.Path] = s
		case cassette.OpSkip:
			continue
		default:
			a.making[s.Path] = s
		}
		if !cleanRel(s.Path) {
			continue // refused by check
		}
		for d := path.Dir(s.Path); d != "." && !a.dirs[d]; d = path.Dir(d) {
			a.dirs[d] = true
		}
		if a.making[s.Path] == s {
			for d := path.Dir(s.Path); d != "." && !a.parents[d]; d = path.Dir(d) {
				a.parents[d] = true
			}
		}
	}
	return a
}

// now is what rel holds in the tree now; a path under something that is not
// a directory holds nothing. Looked up through the root, one component at a
// time, so that no link is followed.
func (a *applier) now(rel string) node {
	if n, ok := a.tree[rel]; ok {
		return n
	}
	n := node{}
	if !cleanRel(rel) {
		return n
	}
	if d := path.Dir(rel); d != "." && a.now(d).kind != isDir {
		a.tree[rel] = n
		return n
	}
	d, name := a.handles.at(rel)
	st, err := d.Lstat(name)
	if err == nil {
		n = nodeOf(st)
		if n.kind == isLink {
			n.target, _ = d.Readlink(name)
		}
	}
	a.tree[rel] = n
	return n
}

func nodeOf(st fs.FileInfo) node {
	n := node{mode: st.Mode().Perm()}
	switch {
	case st.Mode().IsRegular():
		n.kind = isFile
	case st.IsDir():
		n.kind = isDir
	case st.Mode()&fs.ModeSymlink != 0:
		n.kind = isLink
	default:
		n.kind = isOther
	}
	n.uid = ownerOf(st)
	return n
}

// final is what rel holds once the plan is applied.
func (a *applier) final(rel string) node {
	if n, ok := a.finals[rel]; ok {
		return n
	}
	n := a.finalUncached(rel)
	a.finals[rel] = n
	return n
}

func (a *applier) finalUncached(rel string) node {
	if !cleanRel(rel) {
		return node{}
	}
	if d := path.Dir(rel); d != "." && a.final(d).kind != isDir {
		return node{}
	}
	if s, ok := a.making[rel]; ok {
		switch s.Op {
		case cassette.OpMkdir:
			return node{kind: isDir}
		case cassette.OpSymlink:
			return node{kind: isLink, target: s.Target}
		}
		return node{kind: isFile}
	}
	if a.parents[rel] && a.removes[rel] == nil {
		if n := a.now(rel); n.kind == absent {
			return node{kind: isDir} // made as a missing parent
		}
	}
	if a.removes[rel] != nil {
		return node{}
	}
	return a.now(rel)
}

// cleanRel reports whether rel is a clean relative path of names.
func cleanRel(rel string) bool {
	if rel == "" || strings.HasPrefix(rel, "/") || strings.ContainsRune(rel, 0) || strings.Contains(rel, `\`) {
		return false
	}
	for part := range strings.SplitSeq(rel, "/") {
		if part == "" || part == "." || part == ".." {
			return false
		}
	}
	return true
}

// tooLong says why rel cannot be made under the root, or "".
func (a *applier) tooLong(rel string) string {
	for part := range strings.SplitSeq(rel, "/") {
		if len(part) > 255 {
			return fmt.Sprintf("%.80s...: a name longer than 255 bytes", rel)
		}
	}
	if len(a.root)+1+len(rel) >= 4096 {
		return fmt.Sprintf("%.80s...: longer than PATH_MAX (4096 bytes) here", rel)
	}
	return ""
}

// problems gathers what check finds, by kind.
type problems struct{ unsafe, blocked, conflicts []problem }

// problem is one reason a plan is refused, and the cassette line of the
// effect it is about.
type problem struct {
	msg  string
	line int
}

func (a *applier) check() error {
	if !a.p.Complete() {
		return &cassette.Error{File: a.p.name, Line: a.p.lines + 1, Err: cassette.ErrTruncated,
			Msg: "incomplete recording: it ends among its file changes, which may be cut short, so none is applied: nothing was written (record it again)"}
	}
	var pr problems
	for i := range a.p.steps {
		s := &a.p.steps[i]
		if s.Op == cassette.OpSkip {
			continue
		}
		if msg := a.tooLong(s.Path); msg != "" {
			pr.blocked = append(pr.blocked, problem{msg, s.line})
			continue
		}
		if msg := a.unsafe(s); msg != "" {
			pr.unsafe = append(pr.unsafe, problem{msg, s.line})
			continue
		}
		a.judge(s, &pr)
	}
	if err := pr.err(a.p.name); err != nil {
		return err
	}
	a.planJobs()
	return nil
}

// err says what refuses the plan, naming the cassette and the line of each
// effect (as name:LINE: when there is one).
func (pr *problems) err(name string) error {
	say := func(sentinel error, ps []problem, end string) error {
		if len(ps) == 1 {
			return fmt.Errorf("%s:%d: %w: %s; %s", name, ps[0].line, sentinel, ps[0].msg, end)
		}
		msgs := make([]string, len(ps))
		for i, p := range ps {
			msgs[i] = fmt.Sprintf("%s (line %d)", p.msg, p.line)
		}
		return fmt.Errorf("%s: %w: %s; %s", name, sentinel, list(msgs), end)
	}
	switch {
	case len(pr.unsafe) > 0:
		return say(ErrUnsafe, pr.unsafe, "the cassette is refused, nothing was written")
	case len(pr.blocked) > 0:
		return say(ErrBlocked, pr.blocked, "nothing was written")
	case len(pr.conflicts) > 0:
		return say(ErrConflict, pr.conflicts, "nothing was written")
	}
	return nil
}

// unsafe says why a step's path may not be touched, or "".
func (a *applier) unsafe(s *step) string {
	rel := s.Path
	if strings.HasPrefix(rel, "/") || strings.ContainsRune(rel, 0) || strings.Contains(rel, `\`) {
		return fmt.Sprintf("%q is not a relative path", rel)
	}
	parts := strings.Split(rel, "/")
	for _, part := range parts {
		if part == "" || part == "." || part == ".." {
			return fmt.Sprintf("%q leaves the working directory or is not clean", rel)
		}
		if strings.EqualFold(part, ".git") {
			return fmt.Sprintf("%q is in .git, which is never written", rel)
		}
	}
	if g, ok := workspace.IgnoredBy(a.p.header.Ignore, rel); ok {
		return fmt.Sprintf("%q matches %q, which the recording ignored", rel, g)
	}
	for i := 1; i < len(parts); i++ {
		dir := strings.Join(parts[:i], "/")
		switch a.final(dir).kind {
		case isLink:
			return fmt.Sprintf("%q passes through the symbolic link %s", rel, dir)
		case isOther:
			return fmt.Sprintf("%q passes through %s, which is not a directory", rel, dir)
		}
	}
	if s.Op == cassette.OpSymlink {
		if msg := a.linkOutside(s); msg != "" {
			return msg
		}
	}
	return ""
}

// maxHops bounds the links followed resolving one target, as the kernel's.
const maxHops = 40

// linkOutside says why the link a step makes would lead outside the root
// or into .git, or "". The target is resolved as the kernel would once the
// plan is applied, link by link (links already in the tree included); a
// component that does not exist is taken as a directory, so that a link
// that would escape once it does is refused now.
func (a *applier) linkOutside(s *step) string {
	outside := fmt.Sprintf("%q links to %q, outside the working directory", s.Path, s.Target)
	if strings.HasPrefix(s.Target, "/") || strings.ContainsRune(s.Target, 0) {
		return outside
	}
	var cur []string
	todo := strings.Split(path.Dir(s.Path), "/")
	if path.Dir(s.Path) == "." {
		todo = nil
	}
	todo = append(todo, strings.Split(s.Target, "/")...)
	hops, missing := 0, false
	for len(todo) > 0 {
		c := todo[0]
		todo = todo[1:]
		switch c {
		case "", ".":
			continue
		case "..":
			if len(cur) == 0 {
				return outside
			}
			cur = cur[:len(cur)-1]
			continue
		}
		next := strings.Join(append(cur, c), "/")
		if strings.EqualFold(c, ".git") {
			return fmt.Sprintf("%q links to %q, into .git", s.Path, s.Target)
		}
		var n node
		if !missing {
			if next == s.Path {
				n = node{kind: isLink, target: s.Target}
			} else {
				n = a.final(next)
			}
		}
		if n.kind == isLink {
			if hops++; hops > maxHops {
				return fmt.Sprintf("%q links to %q, a loop of links", s.Path, s.Target)
			}
			if strings.HasPrefix(n.target, "/") {
				return outside
			}
			todo = append(strings.Split(n.target, "/"), todo...)
			continue
		}
		missing = missing || n.kind != isDir
		cur = append(cur, c)
	}
	return ""
}

// judge checks one step against the tree, and notes what blocks it or
// conflicts with it.
func (a *applier) judge(s *step, pr *problems) {
	rel := s.Path
	removal := s.Op == cassette.OpDelete || s.Op == cassette.OpRmdir
	for !removal {
		dir := path.Dir(rel)
		if dir == "." {
			break
		}
		if a.final(dir).kind != isDir {
			pr.blocked = append(pr.blocked, problem{fmt.Sprintf("%s: %s is not a directory once the cassette is applied", rel, dir), s.line})
			return
		}
		if n := a.now(dir); n.kind != isDir && n.kind != absent && a.removes[dir] == nil {
			pr.blocked = append(pr.blocked, problem{fmt.Sprintf("%s: %s is not a directory", rel, dir), s.line})
			return
		}
		rel = dir
	}
	rel = s.Path
	n := a.now(rel)
	conflict := func(msg string) {
		if !a.opts.Force {
			pr.conflicts = append(pr.conflicts, problem{rel + ": " + msg, s.line})
		}
	}
	blocked := func(msg string) { pr.blocked = append(pr.blocked, problem{rel + ": " + msg, s.line}) }
	removedDir := n.kind == isDir && a.removes[rel] != nil && a.removes[rel].Op == cassette.OpRmdir
	switch s.Op {
	case cassette.OpCreate, cassette.OpModify, cassette.OpSymlink:
		switch {
		case n.kind == isDir && !removedDir:
			blocked("is a directory")
		case n.kind == isOther:
			blocked("is not a file")
		case n.kind == isFile:
			if a.holds(rel, s.SHA256, s.Before) {
				break
			}
			if s.Op == cassette.OpModify {
				conflict("has other content than the agent saw")
			} else if s.Op == cassette.OpCreate {
				conflict("exists, with other content")
			} else {
				conflict("exists and is not the link or file the agent replaced")
			}
		case n.kind == isLink && s.Op != cassette.OpSymlink && s.Before != "link:"+n.target:
			conflict("is a symbolic link: nothing is written through a link")
		case n.kind == absent && s.Op == cassette.OpModify:
			conflict("missing: the agent changed a file that is not here")
		}
	case cassette.OpChmod:
		switch {
		case n.kind != isFile:
			if n.kind == absent {
				conflict("missing: the agent changed the mode of a file that is not here")
			} else {
				blocked("is not a file")
			}
		case n.uid != uint32(os.Geteuid()) && os.Geteuid() != 0:
			blocked("is not yours: its mode cannot be changed")
		default:
			if s.Before != "" && !a.holds(rel, s.Before, s.SHA256) {
				conflict("has other content than the agent saw")
			}
		}
	case cassette.OpDelete:
		switch {
		case n.kind == isDir && a.making[rel] != nil && a.making[rel].Op == cassette.OpMkdir:
			// already the directory that replaces it
		case n.kind == isDir || n.kind == isOther:
			blocked("is not a file")
		case n.kind == isFile && s.Before != "" && !a.holds(rel, s.Before):
			conflict("has other content than the agent deleted")
		case n.kind == isLink && s.Target != "" && n.target != s.Target:
			conflict("links elsewhere than the link the agent deleted")
		}
	case cassette.OpMkdir:
		if n.kind != isDir && n.kind != absent && a.removes[rel] == nil {
			blocked("exists and is not a directory")
		}
	case cassette.OpRmdir:
		switch {
		case n.kind == isDir:
			if left := a.leftIn(rel); left != "" {
				blocked("holds " + left + ", which the cassette does not remove")
			}
		case n.kind != absent && a.making[rel] == nil:
			conflict("is not a directory")
		}
	}
}

// leftIn names an entry of the directory rel that is still there once the
// plan is applied, or "".
func (a *applier) leftIn(rel string) string {
	d, err := a.r.Open(rel)
	if err != nil {
		return err.Error()
	}
	defer d.Close()
	for {
		names, err := d.Readdirnames(256)
		for _, name := range names {
			if strings.HasPrefix(name, TempPrefix) {
				continue
			}
			if child := rel + "/" + name; a.removes[child] == nil {
				return child
			}
		}
		if err != nil {
			return ""
		}
	}
}

// holds reports whether the regular file rel has one of the digests want
// (those that are not ""): of its content as it is, or else as the
// recording redacted it (ApplyOptions.Redact), since a recording keeps
// the digests of redacted content only.
func (a *applier) holds(rel string, want ...string) bool {
	sums := a.sums[rel]
	if sums[0] == "" {
		sums[0] = a.sha(rel, nil)
	}
	if sums[0] != "" && slices.Contains(want, sums[0]) {
		a.sums[rel] = sums
		return true
	}
	if a.opts.Redact != nil && sums[1] == "" {
		sums[1] = a.sha(rel, a.opts.Redact)
	}
	a.sums[rel] = sums
	return sums[1] != "" && slices.Contains(want, sums[1])
}

// sha is the digest of the regular file rel (as redact passes it on, when
// set), "" if it cannot be read.
func (a *applier) sha(rel string, redact func(io.Writer) io.WriteCloser) string {
	d, name := a.handles.at(rel)
	f, err := d.OpenFile(name, os.O_RDONLY|safefile.NoFollowInRoot|safefile.NonBlock, 0)
	if err != nil {
		return ""
	}
	defer f.Close()
	if st, err := f.Stat(); err != nil || !st.Mode().IsRegular() {
		return ""
	}
	h := sha256.New()
	var w io.Writer = h
	var rw io.WriteCloser
	if redact != nil {
		rw = redact(h)
		w = rw
	}
	if _, err := io.Copy(w, f); err != nil {
		return ""
	}
	if rw != nil && rw.Close() != nil {
		return ""
	}
	return hex.EncodeToString(h.Sum(nil))
}

// planJobs turns the checked steps into the commit's jobs, in its order:
// removals (files, then directories, deepest first), directories made
// (shallowest first), files and links put in place, modes changed.
func (a *applier) planJobs() {
	var deletes, rmdirs, mkdirs, places, chmods []*job
	for i := range a.p.steps {
		s := &a.p.steps[i]
		rel := s.Path
		n := a.now(rel)
		j := &job{path: rel, s: s, old: n, mode: perm(s.Mode, 0o644)}
		switch s.Op {
		case cassette.OpCreate, cassette.OpModify:
			if n.kind == isFile && a.holds(rel, s.SHA256) {
				if n.mode != j.mode {
					j.kind = jobChmod
					chmods = append(chmods, j)
				}
				continue
			}
			j.kind = jobPlace
			places = append(places, j)
		case cassette.OpSymlink:
			if n.kind == isLink && n.target == s.Target {
				continue
			}
			j.kind = jobPlace
			places = append(places, j)
		case cassette.OpChmod:
			if n.kind == isFile && n.mode != j.mode {
				j.kind = jobChmod
				chmods = append(chmods, j)
			}
		case cassette.OpDelete:
			if n.kind == isFile || n.kind == isLink {
				j.kind = jobDelete
				deletes = append(deletes, j)
			}
		case cassette.OpRmdir:
			if n.kind == isDir {
				j.kind = jobRmdir
				rmdirs = append(rmdirs, j)
			}
		case cassette.OpMkdir:
			if n.kind != isDir {
				j.kind, j.mode = jobMkdir, perm(s.Mode, 0o755)
				mkdirs = append(mkdirs, j)
			}
		}
	}
	for d := range a.parents {
		if a.making[d] == nil && a.final(d).kind == isDir && a.now(d).kind == absent {
			mkdirs = append(mkdirs, &job{kind: jobMkdir, path: d, mode: 0o755, old: a.now(d)})
		}
	}
	depth := func(j *job) int { return strings.Count(j.path, "/") }
	slices.SortStableFunc(rmdirs, func(x, y *job) int { return depth(y) - depth(x) })
	slices.SortStableFunc(mkdirs, func(x, y *job) int {
		if d := depth(x) - depth(y); d != 0 {
			return d
		}
		return strings.Compare(x.path, y.path)
	})
	a.jobs = slices.Concat(deletes, rmdirs, mkdirs, places, chmods)
}

// keepDir is the directory beside which rel's new content is staged and its
// original kept: the deepest directory above it that is one now and stays
// one (so on the same file system as rel, and not removed by the plan).
func (a *applier) keepDir(rel string) string {
	best := "."
	for d := path.Dir(rel); d != "."; d = path.Dir(d) {
		if a.now(d).kind == isDir && a.removes[d] == nil {
			return d
		}
	}
	return best
}

func (a *applier) tempName(dir string, i int, what string) string {
	return path.Join(dir, TempPrefix+a.token+"-"+strconv.Itoa(i)+"."+what)
}

// interrupted reports whether a signal came.
func (a *applier) interrupted() error {
	if a.opts.Signals == nil {
		return nil
	}
	select {
	case sig := <-a.opts.Signals:
		a.signal = sig
		return fmt.Errorf("%s: %w (%v) before the changes were committed; nothing was written", a.p.name, ErrInterrupted, sig)
	default:
		return nil
	}
}

// stage writes every new file and link beside its place, verified, and
// keeps every original to replace or remove; it changes nothing the tree
// shows. A directory made where nothing is is staged whole: made under a
// temporary name beside its place, with what the plan puts in it staged at
// its own name inside, so that the commit renames it into place once.
// Every directory the commit will change is thus shown writable (a probe
// file where nothing else was staged).
func (a *applier) stage() error {
	wrote := map[string]bool{}
	for i, j := range a.jobs {
		if j.kind != jobMkdir || a.now(j.path).kind != absent {
			continue
		}
		parent := path.Dir(j.path)
		var at string
		switch {
		case a.fresh[parent] != nil:
			j.inNew = true
			at = a.stagedAt(j.path)
		case parent == "." || a.now(parent).kind == isDir && a.removes[parent] == nil:
			j.staged = a.tempName(parent, i, "dir")
			at = j.staged
		default:
			continue // under what is not a directory yet: made by the commit
		}
		d, name := a.handles.at(at)
		if err := a.stageStep(j); err != nil {
			return err
		}
		if err := d.Mkdir(name, j.mode|0o700); err != nil {
			return fmt.Errorf("%s: %s: %w; nothing was written", a.p.name, j.path, unwrapPath(err))
		}
		if j.staged != "" {
			a.made = append(a.made, j.staged)
			wrote[parent] = true
		}
		a.fresh[j.path] = j
	}
	if err := a.stageFiles(wrote); err != nil {
		return err
	}
	for i, j := range a.jobs {
		d := path.Dir(j.path)
		if j.kind == jobChmod || wrote[d] || a.now(d).kind != isDir && d != "." || a.removes[d] != nil {
			continue
		}
		wrote[d] = true
		probe := a.tempName(d, i, "probe")
		dir, name := a.handles.at(probe)
		f, err := dir.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL|safefile.NoFollowInRoot, 0o600)
		if err != nil {
			return fmt.Errorf("%s: %s: %w; nothing was written", a.p.name, j.path, unwrapPath(err))
		}
		f.Close()
		dir.Remove(name)
	}
	return nil
}

// stageFiles stages every new file and link, and keeps every original to
// replace or remove; the new files' content is written by writers.
func (a *applier) stageFiles(wrote map[string]bool) error {
	files := 0
	for _, j := range a.jobs {
		if j.kind == jobPlace && j.s.Op != cassette.OpSymlink {
			files++
		}
	}
	w := newWriters(a, files)
	err := a.stageInOrder(w, wrote)
	if err != nil {
		w.failed.Store(true) // the files still queued are not written
	}
	// Whatever failed, every writer is done before the caller discards
	// what was staged.
	if i, werr := w.wait(); err == nil && werr != nil {
		err = fmt.Errorf("%s: %s: %w; nothing was written", a.p.name, a.jobs[i].path, werr)
	}
	return err
}

func (a *applier) stageInOrder(w *writers, wrote map[string]bool) error {
	for i, j := range a.jobs {
		if i%64 == 0 {
			if err := a.interrupted(); err != nil {
				return err
			}
			if w.failed.Load() {
				return nil // wait says what failed
			}
		}
		if j.kind == jobPlace || j.kind == jobDelete {
			if err := a.stageStep(j); err != nil {
				return err
			}
		}
		if j.kind == jobPlace {
			at := ""
			if a.fresh[path.Dir(j.path)] != nil {
				j.inNew = true
				at = a.stagedAt(j.path)
			} else {
				dir := a.keepDir(j.path)
				j.staged = a.tempName(dir, i, "new")
				a.temps = append(a.temps, j.staged)
				wrote[dir] = true
				at = j.staged
			}
			if j.s.Op == cassette.OpSymlink {
				d, name := a.handles.at(at)
				if err := d.Symlink(j.s.Target, name); err != nil {
					return fmt.Errorf("%s: %s: %w; nothing was written", a.p.name, j.path, unwrapPath(err))
				}
			} else {
				w.write(writeTask{i: i, at: at, s: j.s, mode: j.mode})
			}
		}
		if (j.kind == jobPlace || j.kind == jobDelete) && (j.old.kind == isFile || j.old.kind == isLink) {
			if err := a.keep(j, i); err != nil {
				return err
			}
		}
	}
	return nil
}

// stageStep runs BeforeStage, when set, before a job is staged.
func (a *applier) stageStep(j *job) error {
	if BeforeStage == nil {
		return nil
	}
	if err := BeforeStage(j.path); err != nil {
		return fmt.Errorf("%s: %s: %w; nothing was written", a.p.name, j.path, err)
	}
	return nil
}

// BeforeStage, when set (by tests), runs before each change of an Apply is
// staged, with the change's path; an error fails the staging. A test
// learns from it that an Apply is staging, to fail a step or to signal
// the process then.
var BeforeStage func(path string) error

// stagedAt is where rel, in a new directory, is staged: under the
// temporary name of the outermost new directory it is in.
func (a *applier) stagedAt(rel string) string {
	for d := path.Dir(rel); d != "."; d = path.Dir(d) {
		if j := a.fresh[d]; j != nil && j.staged != "" {
			return j.staged + rel[len(d):]
		}
	}
	return rel
}

// keep makes a backup of the path a job replaces or removes: a hard link
// beside it (a copy where links are not supported).
func (a *applier) keep(j *job, i int) error {
	dir := a.keepDir(j.path)
	j.backup = a.tempName(dir, i, "old")
	a.temps = append(a.temps, j.backup)
	var err error
	if j.old.kind == isLink {
		d, name := a.handles.at(j.backup)
		err = d.Symlink(j.old.target, name)
	} else if err = a.link(dir, j.path, j.backup); err != nil {
		err = a.copyFile(j.path, j.backup, j.old.mode)
	}
	if err != nil {
		return fmt.Errorf("%s: %s: keeping the original: %w; nothing was written", a.p.name, j.path, unwrapPath(err))
	}
	return nil
}

// link makes the hard link to of from, through their directory dir when
// they share it.
func (a *applier) link(dir, from, to string) error {
	if path.Dir(from) == dir {
		if d, err := a.handles.in(dir); err == nil {
			return d.Link(path.Base(from), path.Base(to))
		}
	}
	return a.r.Link(from, to)
}

func (a *applier) copyFile(from, to string, mode fs.FileMode) error {
	src, err := a.r.OpenFile(from, os.O_RDONLY|safefile.NoFollowInRoot, 0)
	if err != nil {
		return err
	}
	defer src.Close()
	dst, err := a.r.OpenFile(to, os.O_WRONLY|os.O_CREATE|os.O_EXCL|safefile.NoFollowInRoot, mode)
	if err != nil {
		return err
	}
	_, err = io.Copy(dst, src)
	if cerr := dst.Close(); err == nil {
		err = cerr
	}
	return err
}

// removeTemp removes the temporary file t, if it is there.
func (a *applier) removeTemp(t string) {
	d, name := a.handles.at(t)
	d.Remove(name)
}

// discard removes the staged files and backups, and the new directories
// staged.
func (a *applier) discard() {
	for _, t := range a.temps {
		a.removeTemp(t)
	}
	a.temps = nil
	a.removeMade()
}

// removeMade removes the new directories staged, with what is in them.
// Those it cannot remove stay listed.
func (a *applier) removeMade() {
	var left []string
	for _, m := range a.made {
		if err := a.r.RemoveAll(m); err != nil {
			left = append(left, m)
		}
	}
	a.made = left
}

// removeStaged removes what a job staged under a temporary name, if it is
// still there.
func (a *applier) removeStaged(j *job) {
	switch {
	case j.staged == "":
	case j.kind == jobMkdir:
		a.r.RemoveAll(j.staged)
	default:
		a.removeTemp(j.staged)
	}
}

// commit makes the staged changes, in order; on a failure it undoes what it
// did.
func (a *applier) commit(res *Result) error {
	var done []*job
	var failed error
	for _, j := range a.jobs {
		if res.Signal == nil && a.opts.Signals != nil {
			select {
			case sig := <-a.opts.Signals:
				res.Signal = sig // the commit is short: it finishes
			default:
			}
		}
		if err := a.do(j); err != nil {
			failed = fmt.Errorf("%s: %s: %w", a.p.name, j.path, unwrapPath(err))
			break
		}
		done = append(done, j)
	}
	if failed == nil {
		for _, j := range a.jobs { // new directories get their recorded mode last
			if j.kind == jobMkdir && j.mode != j.mode|0o700 {
				a.r.Chmod(j.path, j.mode)
			}
		}
		// Every staged file and directory is in place: only the originals
		// kept are left to remove.
		for _, j := range a.jobs {
			if j.backup != "" {
				a.removeTemp(j.backup)
			}
		}
		a.temps, a.made = nil, nil
		seen := map[string]bool{}
		for _, j := range a.jobs {
			if j.s != nil && !seen[j.path] {
				seen[j.path] = true
				res.Applied = append(res.Applied, j.path)
			}
		}
		return nil
	}
	for _, j := range a.jobs[len(done):] { // staged, not placed
		a.removeStaged(j)
	}
	var rollbackErr error
	var changed []string
	for i := len(done) - 1; i >= 0; i-- {
		if err := a.undo(done[i]); err != nil {
			rollbackErr = fmt.Errorf("%s: %w", done[i].path, unwrapPath(err))
			for _, j := range done[:i+1] {
				changed = append(changed, j.path)
			}
			break
		}
	}
	if rollbackErr == nil {
		a.discard()
		if len(a.made) > 0 {
			return &ApplyError{Err: failed, RollbackErr: errors.New("new directories could not be removed"), NotApplied: a.made}
		}
		return &ApplyError{Err: failed, RolledBack: true}
	}
	// Keep the backups of what stays changed (they hold the originals),
	// drop the rest.
	for _, j := range a.jobs {
		a.removeStaged(j)
	}
	last := len(changed)
	var notApplied []string
	for _, j := range a.jobs[last:] {
		if j.backup != "" {
			a.removeTemp(j.backup)
		}
		notApplied = append(notApplied, j.path)
	}
	return &ApplyError{Err: failed, Applied: changed, NotApplied: notApplied, RollbackErr: rollbackErr}
}

// do commits one job.
func (a *applier) do(j *job) error {
	if commitHook != nil {
		if err := commitHook(j.path); err != nil {
			return err
		}
	}
	switch j.kind {
	case jobDelete, jobRmdir:
		return a.r.Remove(j.path)
	case jobMkdir:
		switch {
		case j.inNew:
			return nil // placed with the new directory it is in
		case j.staged != "":
			return a.handles.rename(j.staged, j.path)
		}
		return a.r.Mkdir(j.path, j.mode|0o700)
	case jobPlace:
		if j.inNew {
			return nil
		}
		return a.handles.rename(j.staged, j.path)
	case jobChmod:
		return a.r.Chmod(j.path, j.mode)
	}
	return nil
}

// commitHook, when set (by tests), runs before each commit step; an error
// fails it.
var commitHook func(path string) error

// undo reverts one committed job.
func (a *applier) undo(j *job) error {
	switch j.kind {
	case jobDelete:
		return a.handles.rename(j.backup, j.path)
	case jobRmdir:
		return a.r.Mkdir(j.path, j.old.mode)
	case jobMkdir:
		switch {
		case j.inNew:
			return nil // taken back with the new directory it is in
		case j.staged != "":
			return a.handles.rename(j.path, j.staged) // then removed with what it holds
		}
		return a.r.Remove(j.path)
	case jobPlace:
		if j.inNew {
			return nil
		}
		if j.backup != "" {
			return a.handles.rename(j.backup, j.path)
		}
		return a.r.Remove(j.path)
	case jobChmod:
		return a.r.Chmod(j.path, j.old.mode)
	}
	return nil
}

// removeStale removes the temporary files (and new directories staged)
// that an earlier, killed Apply left in the directories this plan touches,
// and counts them.
func (a *applier) removeStale() int {
	n := 0
	for d := range a.dirs {
		if a.now(d).kind != isDir && d != "." {
			continue
		}
		f, err := a.r.Open(d)
		if err != nil {
			continue
		}
		for {
			names, err := f.Readdirnames(256)
			for _, name := range names {
				if !strings.HasPrefix(name, TempPrefix) {
					continue
				}
				rm := a.r.Remove
				if strings.HasSuffix(name, ".dir") {
					rm = a.r.RemoveAll
				}
				if rm(path.Join(d, name)) == nil {
					n++
				}
			}
			if err != nil {
				break
			}
		}
		f.Close()
	}
	return n
}

// unwrapPath drops the path of a *fs.PathError or *os.LinkError: the
// temporary file's name says nothing to the user, the caller names the path.
func unwrapPath(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	var le *os.LinkError
	if errors.As(err, &le) {
		return le.Err
	}
	return err
}

// perm reads a recorded mode, def when there is none.
func perm(mode string, def fs.FileMode) fs.FileMode {
	m, err := strconv.ParseUint(mode, 8, 32)
	if err != nil || mode == "" {
		return def
	}
	return fs.FileMode(m).Perm()
}
