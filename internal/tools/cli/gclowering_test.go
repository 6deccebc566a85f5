package cli

import (
	"runtime"
	"runtime/debug"
	"testing"
	"time"
)

func gcPercent() int {
	p := debug.SetGCPercent(100)
	debug.SetGCPercent(p)
	return p
}

// The GC percent is lowered after the run's first collection, not
// before, and put back after the run.
func TestGCLoweredAfterFirstCollection(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(100))
	g := lowerGCAfterFirstCollection()
	if p := gcPercent(); p != 100 {
		t.Fatalf("GC percent %d before any collection, want 100", p)
	}
	runtime.GC()
	select {
	case <-g.loweredNow:
	case <-time.After(time.Minute):
		t.Fatal("the GC percent was not lowered after a collection")
	}
	if p := gcPercent(); p != 25 {
		t.Errorf("GC percent %d after a collection, want 25", p)
	}
	g.restore()
	if p := gcPercent(); p != 100 {
		t.Errorf("GC percent %d after restore, want 100", p)
	}
	// Restored before any collection, it stays as it was. The finalizer
	// runs when the scheduler lets it, after a collection or long after the
	// check: what it does, g.lower, is called here, at a known time.
	g = lowerGCAfterFirstCollection()
	g.restore()
	runtime.GC()
	g.lower()
	if p := gcPercent(); p != 100 {
		t.Errorf("GC percent %d after a collection past restore, want 100", p)
	}
}
