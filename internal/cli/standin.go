package cli

// runStandin is the cursor-agent stand-in; implemented in the replayer work.
func runStandin(env *Env, args []string) int {
	return usageErr(env, "cursor-agent (agentvcr)", "stand-in not implemented yet")
}
