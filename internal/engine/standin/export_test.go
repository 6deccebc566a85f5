package standin

// SetMaxLogLine lowers the run log's bound on a line for a test, so that a
// test shows the bound without reading 64 MiB; it returns the restore.
func SetMaxLogLine(n int) (restore func()) {
	old := maxLogLine
	maxLogLine = n
	return func() { maxLogLine = old }
}
