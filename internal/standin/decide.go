package standin

// action is what a call does, as its situation decides.
type action int

const (
	// replayFirst replays the recording of the invocation's first take,
	// or one from before takes, which answers every take.
	replayFirst action = iota + 1
	// replayTake replays the recording of the call's own take.
	replayTake
	// record runs the real agent and records the call's take, once the
	// call has its turn (recorders of one invocation take turns).
	record
	// replayRecorded replays the recording of the call's take that
	// another stand-in made while this one waited for its turn to record.
	replayRecorded
	// miss fails the call: nothing records it.
	miss
	// tooMany fails the call: the test made it more times than recorded.
	tooMany
)

func (a action) String() string {
	switch a {
	case replayFirst:
		return "replay the first take"
	case replayTake:
		return "replay the call's take"
	case record:
		return "record"
	case replayRecorded:
		return "replay what was recorded while waiting"
	case miss:
		return "miss"
	case tooMany:
		return "too many calls"
	}
	return "no action"
}

// situation is all a call's action depends on: its mode, CI, its take and
// what the index holds for it.
type situation struct {
	mode Mode
	// ci: under CI ($CI set), without $AGENTVCR_RECORD_IN_CI=1.
	ci   bool
	take int // which take of its invocation the call is, 1 for the first
	// first: a recording of the invocation's first take (or from before
	// takes, legacy, which then answers every take).
	first, legacy bool
	// own: a recording of the call's take (the first, for take 1).
	own bool
	// fresh: own was made since the call (or its test run) began, or,
	// once the call waited, while it waited for its turn to record.
	fresh bool
	// waited: the call has its turn to record, and looked again.
	waited bool
}

// modeUnder is the mode a call acts in: under CI, record and once act as
// replay, and the real agent never runs (a cassette recorded there
// silently is one nobody reviewed, made with CI's credentials).
func modeUnder(mode Mode, ci bool) Mode {
	if ci && (mode == ModeRecord || mode == ModeOnce) {
		return ModeReplay
	}
	return mode
}

// decide is the stand-in's one decision for a call that may replay or
// record (passthrough never looks), as go-vcr's recorder decides in one
// switch. A call that decides record decides again, waited, once it has its
// turn: another stand-in may have recorded the call meanwhile.
func (s situation) decide() action {
	mode := modeUnder(s.mode, s.ci)
	waited := s.waited && (mode == ModeRecord || mode == ModeOnce)
	switch {
	case waited && s.own && (mode == ModeOnce || s.fresh):
		return replayRecorded
	case waited:
		return record
	case mode == ModeRecord && s.fresh:
		// Recorded by another test of the run since it began: the agent
		// need not run again for the same call.
		return replayTake
	case mode == ModeRecord:
		return record
	case s.first && (s.legacy || s.take <= 1):
		return replayFirst
	case s.own:
		return replayTake
	case mode == ModeOnce:
		return record
	case s.first:
		// The last take is never replayed again in place of the next, so
		// that code that retries or polls is tested as recorded.
		return tooMany
	}
	return miss
}
