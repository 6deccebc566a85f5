package agentscript

import (
	"fmt"
	"slices"
	"strings"
	"testing"
)

func TestSplitArgs(t *testing.T) {
	for _, tc := range []struct {
		args    string
		pos     []string
		set     []string // flag=value, in order
		wantErr string
	}{
		{args: "json", pos: []string{"json"}},
		{args: "--n 3 a -v b", pos: []string{"a", "b"}, set: []string{"--n=3", "-v="}},
		{args: "a -n=4 - --v", pos: []string{"a", "-"}, set: []string{"-n=4", "--v="}},
		{args: "a -n", wantErr: "-n needs a number"},
		{args: "--v=1 a", wantErr: "--v takes no value"},
		{args: "---n 1", wantErr: "unknown flag ---n"},
		{args: "--bogus=1 a", wantErr: "unknown flag --bogus=1"},
		{args: "--n x", wantErr: `--n "x": not a number`},
	} {
		t.Run(tc.args, func(t *testing.T) {
			var set []string
			record := func(flag, val string) error {
				if flag == "-n" || flag == "--n" {
					if strings.Trim(val, "0123456789") != "" {
						return fmt.Errorf("%s %q: not a number", flag, val)
					}
				}
				set = append(set, flag+"="+val)
				return nil
			}
			pos, err := splitArgs(strings.Fields(tc.args), []cmdFlag{{name: "n", value: "a number", set: record}, {name: "v", set: record}})
			if tc.wantErr != "" {
				if err == nil || err.Error() != tc.wantErr {
					t.Fatalf("error %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil || !slices.Equal(pos, tc.pos) || !slices.Equal(set, tc.set) {
				t.Errorf("splitArgs = %q, %v; flags set %q; want %q, flags %q", pos, err, set, tc.pos, tc.set)
			}
		})
	}
}
