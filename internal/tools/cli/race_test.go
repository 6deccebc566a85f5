//go:build race

package cli_test

// raceEnabled: the race detector multiplies a process's memory, so peak-RSS
// bounds are not checked under it.
const raceEnabled = true
