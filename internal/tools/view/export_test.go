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

// SetBatchRows sets how many rows a page renders at once and how many each
// deferred batch holds, for a test; restore sets them back.
func SetBatchRows(eager, batch int) (restore func()) {
	oldEager, oldBatch := eagerRows, batchRows
	eagerRows, batchRows = eager, batch
	return func() { eagerRows, batchRows = oldEager, oldBatch }
}

// SetMaxText sets how much of one text a page holds, for a test; restore
// sets it back.
func SetMaxText(n int64) (restore func()) {
	old := maxText
	maxText = n
	return func() { maxText = old }
}

// VisibleText is how much of one text a page lays out at once.
const VisibleText = visibleText
