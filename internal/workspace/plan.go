package workspace

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"os"

	"github.com/agentvcr/agentvcr/cassette"
)

// Bounds on what a plan holds in memory: the number of effects and the bytes
// of their descriptions (paths, targets, digests, notes; the content is
// spooled to disk). A recording of a tree within DefaultMaxFiles
// stays far below them; a hostile cassette cannot make a plan hold more.
const (
	MaxPlanEffects   = 1 << 20
	MaxPlanPathBytes = 64 << 20
)

// planLimits are the bounds in force (tests lower them).
var planLimits = struct{ effects, bytes int }{MaxPlanEffects, MaxPlanPathBytes}

// Plan is the file effects of one cassette, read once and checked: every
// effect's description in memory, every file's content spooled to a private
// unlinked file (never held whole), its size and sha256 verified as it was
// read. Only a plan is applied ([Apply]): what is applied is exactly what was
// checked, however the cassette changes afterwards (a FIFO serving other bytes
// to a second reader, a file rewritten meanwhile). A plan also keeps the
// recorded output, for a replay that must not read the cassette a second time
// ([Plan.Output]). Close it when done.
type Plan struct {
	name   string
	header cassette.Header
	steps  []step
	lines  int

	content *os.File // effect content, at step.off
	output  *os.File // the output frames, as a cassette
	footer  *cassette.Footer
}

// step is one effect of a plan.
type step struct {
	cassette.Effect
	line int   // the cassette line of its frame
	off  int64 // where its content starts in the plan's content spool
}

// ReadPlan reads the rest of the cassette rd (whose header is read) once, to
// its end, into a plan. The cassette's own format errors come back as they
// are (a *cassette.Error naming the file and line); so does a plan that
// breaks the rules no recorder breaks: a path given twice (but for a change
// of type, as a file becoming a directory), content that does not match its
// recorded size and sha256, more effects than MaxPlanEffects.
func ReadPlan(rd *cassette.Reader) (p *Plan, err error) {
	rd.Effects = true
	p = &Plan{name: rd.Name(), header: rd.Header()}
	defer func() {
		if err != nil {
			p.Close()
			p = nil
		}
	}()
	if p.content, err = spoolFile("agentvcr-plan-*"); err != nil {
		return p, err
	}
	if p.output, err = spoolFile("agentvcr-output-*"); err != nil {
		return p, err
	}
	content := bufio.NewWriterSize(p.content, 256<<10)
	output := bufio.NewWriterSize(p.output, 256<<10)
	cw, err := cassette.NewWriter(output, p.header)
	if err != nil {
		return p, err
	}
	var (
		off       int64
		cur       *step
		got       int64
		digest    hash.Hash = sha256.New()
		seen                = map[string]int{} // path: index of its first step
		pathBytes int
	)
	finish := func() error {
		if cur == nil {
			return nil
		}
		if cur.Op == cassette.OpCreate || cur.Op == cassette.OpModify {
			if got != cur.Size || hex.EncodeToString(digest.Sum(nil)) != cur.SHA256 {
				return p.errAt(cur.line, "file effect %.200q: its %d bytes do not match the recorded sha256", cur.Path, got)
			}
		}
		cur = nil
		return nil
	}
	for {
		c, err := rd.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return p, err
		}
		if c.Stream != cassette.Files {
			if err := cw.WriteChunk(c.Stream, c.Offset, c.Data); err != nil {
				return p, err
			}
			continue
		}
		if c.First {
			if err := finish(); err != nil {
				return p, err
			}
			if len(p.steps) == planLimits.effects {
				return p, p.errAt(c.Line, "more than %d file effects", planLimits.effects)
			}
			e := c.Effect
			if pathBytes += len(e.Path) + len(e.Target) + len(e.Note) + len(e.Before) + len(e.Lines) + len(e.SHA256) + len(e.Mode) + len(e.Op); pathBytes > planLimits.bytes {
				return p, p.errAt(c.Line, "the file effects' descriptions take more than %d bytes", planLimits.bytes)
			}
			if i, ok := seen[c.Effect.Path]; ok {
				if !typeChange(p.steps[i].Op, c.Effect.Op) || p.steps[i].line < 0 {
					return p, p.errAt(c.Line, "file effect %.200q: the path was changed already at line %d", c.Effect.Path, p.steps[i].line)
				}
				p.steps[i].line = -p.steps[i].line // a pair: a third is refused
			} else {
				seen[c.Effect.Path] = len(p.steps)
			}
			p.steps = append(p.steps, step{Effect: *c.Effect, line: c.Line, off: off})
			cur = &p.steps[len(p.steps)-1]
			got = 0
			digest.Reset()
		}
		if cur == nil {
			return p, p.errAt(c.Line, "file content without its effect")
		}
		if _, err := content.Write(c.Data); err != nil {
			return p, fmt.Errorf("spooling the cassette's files: %w", err)
		}
		digest.Write(c.Data)
		got += int64(len(c.Data))
		off += int64(len(c.Data))
	}
	if err := finish(); err != nil {
		return p, err
	}
	for i := range p.steps {
		if p.steps[i].line < 0 {
			p.steps[i].line = -p.steps[i].line
		}
	}
	p.lines = rd.Line()
	if f, ok := rd.Footer(); ok {
		p.footer = &f
		if err := cw.Close(f); err != nil {
			return p, err
		}
	}
	if err := content.Flush(); err != nil {
		return p, fmt.Errorf("spooling the cassette's files: %w", err)
	}
	if err := output.Flush(); err != nil {
		return p, fmt.Errorf("spooling the cassette's output: %w", err)
	}
	return p, nil
}

// typeChange reports whether two effects on one path are how a recording
// says that its type changed: a file or link removed and a directory made,
// or a directory removed and a file or link made, in either order.
func typeChange(a, b string) bool {
	removes := func(op string) bool { return op == cassette.OpDelete || op == cassette.OpRmdir }
	if removes(b) {
		a, b = b, a
	}
	switch a {
	case cassette.OpDelete:
		return b == cassette.OpMkdir
	case cassette.OpRmdir:
		return b == cassette.OpCreate || b == cassette.OpSymlink || b == cassette.OpSkip
	}
	return false
}

func spoolFile(pattern string) (*os.File, error) {
	f, err := os.CreateTemp("", pattern)
	if err != nil {
		return nil, fmt.Errorf("cannot spool the cassette: %w", err)
	}
	os.Remove(f.Name()) // private: nobody else can open it, and it goes with the process
	return f, nil
}

func (p *Plan) errAt(line int, format string, args ...any) error {
	return &cassette.Error{File: p.name, Line: line, Msg: fmt.Sprintf(format, args...), Err: cassette.ErrFormat}
}

// Name is the cassette's name, as its reader gave it.
func (p *Plan) Name() string { return p.name }

// Header is the cassette's header.
func (p *Plan) Header() cassette.Header { return p.header }

// Complete reports whether the cassette ends with its footer. The file
// effects of one that does not may be cut short: they are not applied.
func (p *Plan) Complete() bool { return p.footer != nil }

// Lines is the number of cassette lines read.
func (p *Plan) Lines() int { return p.lines }

// Effects lists the plan's effects, in the cassette's order.
func (p *Plan) Effects() []cassette.Effect {
	out := make([]cassette.Effect, len(p.steps))
	for i, s := range p.steps {
		out[i] = s.Effect
	}
	return out
}

// Output returns a reader of the recorded output (stdout and stderr frames,
// and the footer if the cassette has one) as the plan read it, for a replay:
// the cassette is not read again. Each call starts from the beginning; the
// reader's name is the cassette's, its line numbers its own.
func (p *Plan) Output() (*cassette.Reader, error) {
	if p.output == nil {
		return nil, errors.New("workspace: plan is closed")
	}
	end, err := p.output.Seek(0, io.SeekEnd)
	if err != nil {
		return nil, err
	}
	return cassette.NewReader(io.NewSectionReader(p.output, 0, end), p.name)
}

// contentOf is the content of step s.
func (p *Plan) contentOf(s *step) io.Reader { return io.NewSectionReader(p.content, s.off, s.Size) }

// Close releases the plan's spool files.
func (p *Plan) Close() error {
	for _, f := range []*os.File{p.content, p.output} {
		if f != nil {
			f.Close()
		}
	}
	p.content, p.output = nil, nil
	return nil
}
