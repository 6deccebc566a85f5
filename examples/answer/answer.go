// Package answer asks the Cursor agent a question and returns its answer: the
// "result" of "cursor-agent --print --output-format json".
//
// It is the example consumer of agentvcr's plain go test API: its tests
// (answer_test.go) use package agentvcrtest only, no testscript.
package answer

import (
	"encoding/json"
	"errors"
	"fmt"
	"os/exec"
)

// Ask runs the agent on prompt in the current directory and returns its answer.
func Ask(prompt string) (string, error) { return AskIn("", prompt) }

// AskIn runs the agent on prompt in dir, where it may change files, and
// returns its answer.
func AskIn(dir, prompt string) (string, error) {
	cmd := exec.Command("cursor-agent", "--print", "--output-format", "json", prompt)
	cmd.Dir = dir
	out, err := cmd.Output()
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		return "", fmt.Errorf("cursor-agent failed (exit %d): %s", exit.ExitCode(), exit.Stderr)
	}
	if err != nil {
		return "", err
	}
	var res struct {
		Result  string `json:"result"`
		IsError bool   `json:"is_error"`
	}
	if err := json.Unmarshal(out, &res); err != nil {
		return "", fmt.Errorf("cursor-agent printed no JSON result: %w", err)
	}
	if res.IsError {
		return "", fmt.Errorf("cursor-agent: %s", res.Result)
	}
	return res.Result, nil
}
