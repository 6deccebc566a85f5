package standin

import "time"

// action is what a call does, as its situation decides.
type action int

const (
	// passthrough runs the real agent and saves nothing; it never looks
	// at the cassettes.
	passthrough action = iota + 1
	// look reads the cassette directory for the call, which then decides
	// again with what it found.
	look
	// unreadable fails the call: the cassette directory cannot be read,
	// and the call may not record into it.
	unreadable
	// replayFirst replays the recording of the invocation's first take,
	// or one from before takes, which answers every take.
	replayFirst
	// replayTake replays the recording of the call's own take.
	replayTake
	// replayFresh replays a recording of the call's take made since its
	// test run began (by another test of the run): the agent need not run
	// again for the same call. Older recordings do not answer.
	replayFresh
	// record runs the real agent and records the call's take, once the
	// call has its turn (recorders of one invocation take turns).
	record
	// rerecord is record replacing what was recorded before: the call's
	// take, and the later takes of an earlier recording of the test.
	rerecord
	// replayRecorded replays the recording of the call's take that
	// another stand-in made while this one waited for its turn to record.
	replayRecorded
	// miss fails the call: nothing records it.
	miss
	// tooMany fails the call: the test made it more times than recorded.
	tooMany
	// rerun runs the real agent against the model exchanges of the
	// recording of the call's take (or the first's, as replay would pick).
	rerun
)

func (a action) String() string {
	switch a {
	case passthrough:
		return "pass through"
	case look:
		return "look"
	case unreadable:
		return "unreadable directory"
	case replayFirst:
		return "replay the first take"
	case replayTake:
		return "replay the call's take"
	case replayFresh:
		return "replay the take recorded since the run began"
	case record:
		return "record"
	case rerecord:
		return "record again"
	case replayRecorded:
		return "replay what was recorded while waiting"
	case miss:
		return "miss"
	case tooMany:
		return "too many calls"
	case rerun:
		return "rerun the agent against the recorded model"
	}
	return "no action"
}

// records reports whether the action runs the real agent into a cassette.
func (a action) records() bool { return a == record || a == rerecord }

// situation is all a call's action depends on: its mode, CI, its take and
// what the cassette directory holds for it. It is built in one place
// (call.situate) and read in one place (decide).
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
	// unlooked: the cassette directory has not been read for the call yet.
	unlooked bool
	// unreadable: the cassette directory could not be read; noDir: it is
	// not there.
	unreadable, noDir bool
	// diverged: a replayed conversation met a message no recording holds.
	diverged bool
}

// actingMode is the mode a call acts in: under CI, record and once act as
// replay, and the real agent never runs (a cassette recorded there
// silently is one nobody reviewed, made with CI's credentials).
func (s situation) actingMode() Mode {
	if s.ci && (s.mode == ModeRecord || s.mode == ModeOnce) {
		return ModeReplay
	}
	return s.mode
}

// decide is the stand-in's one decision, as go-vcr's recorder decides in
// one switch: every mode is a case here and nowhere else. A call decides
// first before it looks (passthrough never looks), then with what it
// found; one that decides to record decides again, waited, once it has
// its turn: another stand-in may have recorded the call meanwhile.
func (s situation) decide() action {
	mode := s.actingMode()
	live := mode == ModeRecord || mode == ModeOnce
	switch {
	case mode == ModePassthrough:
		return passthrough
	case s.unlooked:
		return look
	case s.unreadable && !(mode == ModeRecord || mode == ModeOnce && s.noDir):
		// Record mode records whatever the directory holds; once records
		// into a directory not there yet.
		return unreadable
	case s.diverged && mode == ModeRecord:
		return rerecord
	case s.diverged && live:
		return record
	case s.diverged:
		return miss
	case mode == ModeRerun && (s.own || s.first && (s.legacy || s.take <= 1)):
		// A new build of the agent, its model answered from the recording;
		// it needs no network, so CI may run it.
		return rerun
	case s.waited && live && s.own && (mode == ModeOnce || s.fresh):
		return replayRecorded
	case s.waited && mode == ModeRecord:
		return rerecord
	case s.waited && live:
		return record
	case mode == ModeRecord && s.fresh:
		// Recorded by another test of the run since it began.
		return replayFresh
	case mode == ModeRecord:
		return rerecord
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

// found is what a look found for one take: a recording, its take (0 for
// one from before takes) and when it was made.
type found struct {
	ok    bool
	take  int
	start time.Time
	// fresh is set when the recording was made while the call waited for
	// its turn (the look after the wait knows; the first look does not).
	fresh bool
}

// situate builds the call's situation, the one place it is built: before
// any look (first and own zero, unlooked), after one, or after the wait for
// the turn to record. libErr is the error the cassette directory gave, if
// any; a recording is fresh when made since the call (or its run) began.
func (c *call) situate(unlooked bool, libErr error, first, own found, waited bool) situation {
	return situation{mode: c.mode, ci: c.ci, take: c.take, unlooked: unlooked,
		unreadable: libErr != nil, noDir: libErr != nil && isNotExist(libErr),
		first: first.ok, legacy: first.ok && first.take == 0,
		own: own.ok, fresh: own.ok && (own.fresh || !own.start.Before(c.start)),
		waited: waited}
}
