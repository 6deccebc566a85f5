package apply

// SetCommitHook makes f run before each commit step of Apply (nil: none).
func SetCommitHook(f func(path string) error) { commitHook = f }

// SetStageHook makes f run before each job of Apply is staged (nil: none).
func SetStageHook(f func(path string) error) { stageHook = f }

// SetPlanLimits lowers the bounds of a plan until restore is called.
func SetPlanLimits(effects, bytes int) (restore func()) {
	old := planLimits
	planLimits.effects, planLimits.bytes = effects, bytes
	return func() { planLimits = old }
}
