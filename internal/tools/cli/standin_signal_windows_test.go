//go:build windows

package cli_test

// envApplying: see standin_signal_test.go, whose signal tests are Unix's.
const envApplying = "AGENTVCR_TEST_APPLYING"

func holdUntilSignalled(path, say string) {}
