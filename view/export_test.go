package view

// SetPageRows sets how many rows a page holds, for a test; restore sets it
// back.
func SetPageRows(n int) (restore func()) {
	old := pageRows
	pageRows = n
	return func() { pageRows = old }
}
