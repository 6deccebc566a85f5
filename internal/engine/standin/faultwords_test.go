package standin_test

import (
	"errors"
	"testing"

	"github.com/agentvcr/agentvcr/internal/engine/standin"
)

// One grammar, two ways of saying it: a bad word is named as an
// $AGENTVCR_FAULT word or as the flag of "agentvcr replay".
func TestFaultMessages(t *testing.T) {
	for _, tc := range []struct {
		words         string
		message, flag string
	}{
		{"stop-after-events=-1", `"stop-after-events=-1": want stop-after-events=N, N a positive count`, "--stop-after-events -1: want a positive count"},
		{"exit-code=300", `"exit-code=300": want exit-code=N, N from 0 to 255`, "--exit-code 300: want 0 to 255"},
		{"pace=-1", `"pace=-1": want pace=X, X a positive speed (1 = the recorded timing, 2 = twice as fast)`, "--pace -1: want 0 (at once) or a positive speed"},
		{"pace=2,max-delay=-1s", `"max-delay=-1s": want max-delay=D, D a duration such as 500ms`, "--max-delay -1s: want 0 (no pause) or a positive duration"},
		{"max-delay=1s", "max-delay goes with pace=X", "--max-delay goes with --pace"},
		{"stall,stall", `"stall": given twice`, `"stall": given twice`},
	} {
		_, err := standin.ParseFaultWords(standin.SplitFault(tc.words))
		var fe *standin.FaultError
		if !errors.As(err, &fe) || !errors.Is(err, standin.ErrFault) {
			t.Errorf("%q: %v, want a *FaultError", tc.words, err)
			continue
		}
		if got := fe.Message(); got != tc.message {
			t.Errorf("%q: message %q, want %q", tc.words, got, tc.message)
		}
		if got := fe.FlagMessage(); got != tc.flag {
			t.Errorf("%q: flag message %q, want %q", tc.words, got, tc.flag)
		}
	}
	if got, want := standin.FaultUsage(), "stop-after-events=N, stop-after-bytes=N, exit-code=N, stall, pace=X, max-delay=D"; got != want {
		t.Errorf("usage %q, want %q", got, want)
	}
}
