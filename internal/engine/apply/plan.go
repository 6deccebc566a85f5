package apply

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
// to a second reader, a file rewritten meanwhile). Close it when done.
type Plan struct {
	name   string
	header cassette.Header
	steps  []step
	lines  int

	content *os.File // effect content, at step.off
	size    int64    // of the content
	footer  *cassette.Footer
}

// step is one effect of a plan.
type step struct {
	cassette.Effect
	line int   // the cassette line of its frame
	off  int64 // where its content starts in the plan's content spool
}

// ReadPlan reads the rest of the cassette rd (whose header is read) once, to
// its end, into a plan; its output is passed over (a replay that plays it
// too reads the cassette once with a PlanBuilder). The cassette's own
// format errors come back as they are (a *cassette.Error naming the file and
// line); so does a plan that breaks the rules no recorder breaks: a path
// given twice (but for a change of type, as a file becoming a directory),
// content that does not match its recorded size and sha256, more effects
// than MaxPlanEffects.
func ReadPlan(rd *cassette.Reader) (*Plan, error) {
	rd.Effects = true
	b, err := NewPlanBuilder(rd.Name(), rd.Header())
	if err != nil {
		return nil, err
	}
	for {
		c, err := rd.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			b.Abort()
			return nil, err
		}
		if c.Stream != cassette.Files {
			continue
		}
		if err := b.Add(c); err != nil {
			return nil, err
		}
	}
	var footer *cassette.Footer
	if f, ok := rd.Footer(); ok {
		footer = &f
	}
	return b.Finish(rd.Line(), footer)
}

// PlanBuilder makes a plan of the file chunks of a cassette as they are
// read (see ReadPlan, whose checks it makes), so that the one read of a
// cassette can play its output as well.
type PlanBuilder struct {
	p         *Plan
	content   *bufio.Writer
	off       int64
	cur       *step
	got       int64
	digest    hash.Hash
	seen      map[string]int // path: index of its first step
	pathBytes int
}

// NewPlanBuilder starts the plan of the cassette name with header h. The
// builder is done with once Finish or Abort is called, or Add fails.
func NewPlanBuilder(name string, h cassette.Header) (*PlanBuilder, error) {
	// The spool is made with the first content: most replays have none.
	return &PlanBuilder{p: &Plan{name: name, header: h}, digest: sha256.New(), seen: map[string]int{}}, nil
}

// Abort releases what the builder holds.
func (b *PlanBuilder) Abort() { b.p.Close() }

// Add takes the next chunk of the cassette's file changes (a Files chunk,
// as read with Reader.Effects set). An error aborts the plan.
func (b *PlanBuilder) Add(c cassette.Chunk) error {
	if err := b.add(c); err != nil {
		b.Abort()
		return err
	}
	return nil
}

func (b *PlanBuilder) add(c cassette.Chunk) error {
	p := b.p
	if c.First {
		if err := b.finishStep(); err != nil {
			return err
		}
		if len(p.steps) == planLimits.effects {
			return p.errAt(c.Line, "more than %d file effects", planLimits.effects)
		}
		e := c.Effect
		if b.pathBytes += len(e.Path) + len(e.Target) + len(e.Note) + len(e.Before) + len(e.Lines) + len(e.SHA256) + len(e.Mode) + len(e.Op); b.pathBytes > planLimits.bytes {
			return p.errAt(c.Line, "the file effects' descriptions take more than %d bytes", planLimits.bytes)
		}
		if i, ok := b.seen[c.Effect.Path]; ok {
			if !typeChange(p.steps[i].Op, c.Effect.Op) || p.steps[i].line < 0 {
				return p.errAt(c.Line, "file effect %.200q: the path was changed already at line %d", c.Effect.Path, p.steps[i].line)
			}
			p.steps[i].line = -p.steps[i].line // a pair: a third is refused
		} else {
			b.seen[c.Effect.Path] = len(p.steps)
		}
		p.steps = append(p.steps, step{Effect: *c.Effect, line: c.Line, off: b.off})
		b.cur = &p.steps[len(p.steps)-1]
		b.got = 0
		b.digest.Reset()
	}
	if b.cur == nil {
		return p.errAt(c.Line, "file content without its effect")
	}
	if len(c.Data) > 0 {
		if b.content == nil {
			var err error
			if p.content, err = spoolFile("agentvcr-plan-*"); err != nil {
				return err
			}
			b.content = bufio.NewWriterSize(p.content, 256<<10)
		}
		if _, err := b.content.Write(c.Data); err != nil {
			return fmt.Errorf("spooling the cassette's files: %w", err)
		}
	}
	b.digest.Write(c.Data)
	b.got += int64(len(c.Data))
	b.off += int64(len(c.Data))
	return nil
}

// finishStep checks the content of the step being read against its size
// and digest.
func (b *PlanBuilder) finishStep() error {
	cur := b.cur
	if cur == nil {
		return nil
	}
	if cur.Op == cassette.OpCreate || cur.Op == cassette.OpModify {
		if b.got != cur.Size || hex.EncodeToString(b.digest.Sum(nil)) != cur.SHA256 {
			return b.p.errAt(cur.line, "file effect %.200q: its %d bytes do not match the recorded sha256", cur.Path, b.got)
		}
	}
	b.cur = nil
	return nil
}

// Finish ends the plan once the cassette is read to its end: lines is the
// number of its lines, footer its footer (nil for an incomplete one).
func (b *PlanBuilder) Finish(lines int, footer *cassette.Footer) (*Plan, error) {
	p := b.p
	if err := b.finishStep(); err != nil {
		b.Abort()
		return nil, err
	}
	for i := range p.steps {
		if p.steps[i].line < 0 {
			p.steps[i].line = -p.steps[i].line
		}
	}
	p.lines, p.footer, p.size = lines, footer, b.off
	if b.content == nil {
		return p, nil
	}
	if err := b.content.Flush(); err != nil {
		b.Abort()
		return nil, fmt.Errorf("spooling the cassette's files: %w", err)
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

// contentOf is the content of step s.
func (p *Plan) contentOf(s *step) io.Reader { return io.NewSectionReader(p.content, s.off, s.Size) }

// Close releases the plan's spool file.
func (p *Plan) Close() error {
	if p.content != nil {
		p.content.Close()
	}
	p.content = nil
	return nil
}
