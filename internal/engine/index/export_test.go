package index

// SetMinDelta sets how many changes a delta holds at least, for a test;
// restore sets it back.
func SetMinDelta(n int) (restore func()) {
	old := minDelta
	minDelta = n
	return func() { minDelta = old }
}
