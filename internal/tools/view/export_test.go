package view

// SetPageRows sets how many rows a page holds, for a test; restore sets it
// back.
func SetPageRows(n int) (restore func()) {
	old := pageRows
	pageRows = n
	return func() { pageRows = old }
}

// SetPageBytes sets how much of a page its rows may take and how much of
// one text it holds, for a test; restore sets them back.
func SetPageBytes(rows, text int64) (restore func()) {
	oldRows, oldText := pageBytes, maxText
	pageBytes, maxText = rows, text
	return func() { pageBytes, maxText = oldRows, oldText }
}
