package normalize

import (
	"github.com/agentvcr/agentvcr/cassette"
)

// Profile is what ForRun asks of an agent's profile; an agent.Profile is
// one. Format is the output format argv asks for (ok false when argv says
// none). A profile with a NormalizeRules() *Rules method adds the rules its
// output needs, one with DeltaRules() *Rules those of the values it streams
// in pieces (package agent's Normalizing and Streaming).
type Profile interface {
	Format(argv []string) (f cassette.Format, ok bool)
}

// ForRun returns the options that normalise the output of a recorded run
// exactly as agentvcrtest.Golden, agentscript's golden and normalize
// commands and "agentvcr normalize" do: the directories of the run's
// header h, the format its argv asks for (else the one head, the start of
// its stdout, shows; Auto when head is nil), and the rules of p, the
// profile of its agent (nil for none), on top of the default ones:
//
//	p, _ := agent.Identify(h.Argv, head)
//	n := normalize.New(normalize.ForRun(h, p, head))
//
// Add a project's own rules with Options.Rules.
func ForRun(h cassette.Header, p Profile, head []byte) Options {
	opts := Options{Cwd: h.Cwd, Home: h.Home, TempDir: h.TempDir, Format: cassette.Auto}
	if p != nil {
		if f, ok := p.Format(h.Argv); ok {
			opts.Format = f
		}
	}
	if opts.Format == cassette.Auto && head != nil {
		opts.Format = cassette.SniffFormat(head)
	}
	if n, ok := p.(interface{ NormalizeRules() *Rules }); ok {
		opts.AgentRules = n.NormalizeRules()
	}
	if s, ok := p.(interface{ DeltaRules() *Rules }); ok {
		opts.AgentRules = JoinRules(opts.AgentRules, s.DeltaRules())
	}
	return opts
}
