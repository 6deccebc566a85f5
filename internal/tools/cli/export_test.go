package cli

import (
	"testing"
	"time"
)

// SetDrainGrace makes recordings read for d after their agent exits, for
// the rest of test t (see drainGrace). t must not be parallel: the setting
// is the package's.
func SetDrainGrace(t testing.TB, d time.Duration) {
	old := drainGrace.Swap(int64(d))
	t.Cleanup(func() { drainGrace.Store(old) })
}
