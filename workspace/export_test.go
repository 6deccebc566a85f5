package workspace

// SetCommitHook makes f run before each commit step of Apply (nil: none).
func SetCommitHook(f func(path string) error) { commitHook = f }
