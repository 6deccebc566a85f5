package apply

// SetCommitHook makes f run before each commit step of Apply (nil: none).
func SetCommitHook(f func(path string) error) { commitHook = f }

// SetStageHook makes f run before each job of Apply is staged (nil: none).
func SetStageHook(f func(path string) error) { BeforeStage = f }

// SetPlanLimits lowers the bounds of a plan until restore is called.
func SetPlanLimits(effects, bytes int) (restore func()) {
	old := planLimits
	planLimits.effects, planLimits.bytes = effects, bytes
	return func() { planLimits = old }
}

// SetWriteHook makes f run before each new file is written, on the
// goroutine that writes it (nil: none).
func SetWriteHook(f func(path string) error) { writeHook = f }

// SetParallelWrites makes Apply write new files on several goroutines from
// n of them, with up to 4 goroutines, until restore is called.
func SetParallelWrites(n int) (restore func()) {
	old := parallelWrites
	parallelWrites = n
	return func() { parallelWrites = old }
}

// SetWindowSize sets the size of the window small files are read through
// until restore is called.
func SetWindowSize(n int64) (restore func()) {
	old := windowSize
	windowSize = n
	return func() { windowSize = old }
}
