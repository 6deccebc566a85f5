package standin

import (
	"fmt"
	"testing"
)

// Each row is a situation a call can be in and what it must do.
func TestDecide(t *testing.T) {
	const (
		replay, once, rec = ModeReplay, ModeOnce, ModeRecord
	)
	for _, tc := range []struct {
		s    situation
		want action
	}{
		// Replay: what is recorded, else a miss or too many calls.
		{situation{mode: replay, take: 1}, miss},
		{situation{mode: replay, take: 1, first: true, own: true}, replayFirst},
		{situation{mode: replay, take: 1, first: true, own: true, fresh: true}, replayFirst},
		{situation{mode: replay, take: 2, first: true}, tooMany},
		{situation{mode: replay, take: 2, first: true, own: true}, replayTake},
		{situation{mode: replay, take: 2, own: true}, replayTake},
		{situation{mode: replay, take: 3, first: true, legacy: true}, replayFirst},
		{situation{mode: replay, take: 2, first: true, waited: true}, tooMany},
		// Once: what is recorded, else record.
		{situation{mode: once, take: 1}, record},
		{situation{mode: once, take: 1, first: true, own: true}, replayFirst},
		{situation{mode: once, take: 2, first: true}, record},
		{situation{mode: once, take: 2, first: true, own: true}, replayTake},
		{situation{mode: once, take: 2, first: true, legacy: true}, replayFirst},
		// ... and once its turn comes, whatever was recorded meanwhile.
		{situation{mode: once, take: 1, waited: true}, record},
		{situation{mode: once, take: 1, own: true, waited: true}, replayRecorded},
		{situation{mode: once, take: 2, own: true, waited: true}, replayRecorded},
		// Record: again, unless recorded since the run began or while waiting.
		{situation{mode: rec, take: 1}, rerecord},
		{situation{mode: rec, take: 1, first: true, own: true}, rerecord},
		{situation{mode: rec, take: 2, first: true, legacy: true}, rerecord},
		{situation{mode: rec, take: 1, first: true, own: true, fresh: true}, replayFresh},
		{situation{mode: rec, take: 2, own: true, fresh: true}, replayFresh},
		{situation{mode: rec, take: 1, own: true, waited: true}, rerecord},
		{situation{mode: rec, take: 1, waited: true}, rerecord},
		{situation{mode: rec, take: 1, own: true, fresh: true, waited: true}, replayRecorded},
		// CI: record and once act as replay.
		{situation{mode: rec, ci: true, take: 1}, miss},
		{situation{mode: once, ci: true, take: 1}, miss},
		{situation{mode: once, ci: true, take: 2, first: true}, tooMany},
		{situation{mode: rec, ci: true, take: 1, first: true, own: true}, replayFirst},
		{situation{mode: rec, ci: true, take: 2, first: true, own: true}, replayTake},
		{situation{mode: once, ci: true, take: 1, waited: true}, miss},
		{situation{mode: replay, ci: true, take: 1, first: true, own: true}, replayFirst},
		// Before a look: passthrough never looks, the others do.
		{situation{mode: ModePassthrough, unlooked: true}, passthrough},
		{situation{mode: ModePassthrough, ci: true, take: 1, first: true, own: true}, passthrough},
		{situation{mode: replay, unlooked: true}, look},
		{situation{mode: rec, ci: true, unlooked: true}, look},
		// A directory that cannot be read: only a call that may record
		// into it goes on (once, into one not there yet).
		{situation{mode: replay, take: 1, unreadable: true, noDir: true}, unreadable},
		{situation{mode: once, take: 1, unreadable: true}, unreadable},
		{situation{mode: once, take: 1, unreadable: true, noDir: true}, record},
		{situation{mode: rec, take: 1, unreadable: true}, rerecord},
		{situation{mode: once, ci: true, take: 1, unreadable: true, noDir: true}, unreadable},
		// A replayed conversation that diverges: handed over to the agent
		// in a mode that records, else a miss.
		{situation{mode: once, take: 1, own: true, first: true, diverged: true}, record},
		{situation{mode: rec, take: 1, own: true, first: true, fresh: true, diverged: true}, rerecord},
		{situation{mode: replay, take: 1, own: true, first: true, diverged: true}, miss},
		{situation{mode: once, ci: true, take: 1, own: true, first: true, diverged: true}, miss},
		// Rerun: the recording the call would replay answers the live
		// agent's model, under CI too (no network, nothing saved).
		{situation{mode: ModeRerun, take: 1, first: true, own: true}, rerun},
		{situation{mode: ModeRerun, ci: true, take: 1, first: true, own: true}, rerun},
		{situation{mode: ModeRerun, take: 2, own: true}, rerun},
		{situation{mode: ModeRerun, take: 3, first: true, legacy: true}, rerun},
		{situation{mode: ModeRerun, take: 2, first: true}, tooMany},
		{situation{mode: ModeRerun, take: 1}, miss},
		{situation{mode: ModeRerun, unlooked: true}, look},
	} {
		if got := tc.s.decide(); got != tc.want {
			t.Errorf("%+v: %v, want %v", tc.s, got, tc.want)
		}
	}
}

// Every combination decides something that what was found allows: a
// replay has its recording, only a live mode outside CI records, too many
// calls needs an earlier take, and a call with its turn records or
// replays what came meanwhile.
func TestDecideEveryCombination(t *testing.T) {
	bools := []bool{false, true}
	n := 0
	for _, mode := range []Mode{ModeReplay, ModeOnce, ModeRecord, ModeRerun} {
		for _, ci := range bools {
			for _, take := range []int{1, 2, 3} {
				for _, first := range bools {
					for _, legacy := range bools {
						for _, own := range bools {
							for _, fresh := range bools {
								for _, waited := range bools {
									s := situation{mode: mode, ci: ci, take: take, first: first, legacy: legacy, own: own, fresh: fresh, waited: waited}
									if legacy && !first || fresh && !own || take == 1 && own != first {
										continue // not a situation a look at the library gives
									}
									n++
									if err := allowed(s, s.decide()); err != nil {
										t.Errorf("%+v: %v: %v", s, s.decide(), err)
									}
								}
							}
						}
					}
				}
			}
		}
	}
	if n == 0 {
		t.Fatal("no combination was checked")
	}
}

func allowed(s situation, a action) error {
	live := !s.ci && (s.mode == ModeOnce || s.mode == ModeRecord)
	switch a {
	case replayFirst:
		if !s.first || s.take > 1 && !s.legacy || s.waited && live {
			return fmt.Errorf("no first take to replay")
		}
		if s.mode == ModeRecord && live {
			return fmt.Errorf("record mode replays only a fresh recording")
		}
	case replayTake:
		if !s.own || s.waited && live {
			return fmt.Errorf("no take of the call to replay")
		}
		if s.mode == ModeRecord && live {
			return fmt.Errorf("record mode replays only a fresh recording")
		}
	case replayFresh:
		if !s.own || !s.fresh || s.waited || !live || s.mode != ModeRecord {
			return fmt.Errorf("no fresh take to replay in record mode")
		}
	case replayRecorded:
		if !s.waited || !s.own || !live || s.mode == ModeRecord && !s.fresh {
			return fmt.Errorf("nothing recorded while waiting")
		}
	case rerecord:
		if !live || s.mode != ModeRecord {
			return fmt.Errorf("records again in mode %s, CI %v", s.mode, s.ci)
		}
		if s.waited && s.own && s.fresh {
			return fmt.Errorf("records again what was recorded while waiting")
		}
	case record:
		if !live || s.mode == ModeRecord {
			return fmt.Errorf("records in mode %s, CI %v", s.mode, s.ci)
		}
		if !s.waited && s.mode == ModeOnce && (s.own || s.first && (s.legacy || s.take == 1)) {
			return fmt.Errorf("once mode records what is recorded")
		}
	case miss:
		if live || s.first || s.own {
			return fmt.Errorf("a miss with a recording, or in a mode that records")
		}
	case tooMany:
		if live || !s.first || s.own || s.legacy || s.take < 2 {
			return fmt.Errorf("too many calls without an earlier take")
		}
	case rerun:
		if s.mode != ModeRerun || !s.own && !(s.first && (s.legacy || s.take == 1)) {
			return fmt.Errorf("reruns without the recording a replay would give, in mode %s", s.mode)
		}
	default:
		return fmt.Errorf("no action")
	}
	return nil
}
