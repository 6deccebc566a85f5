package agentscript

import (
	"fmt"
	"strings"
)

// cmdFlag is one flag of a script command, written -name or --name.
type cmdFlag struct {
	name string // without dashes
	// value says what the flag takes ("a number"), for errors; "" for a
	// switch, which takes no value.
	value string
	// set receives the flag as written ("--exit-code") and its value ("" for
	// a switch).
	set func(flag, val string) error
}

// splitArgs separates a command's flags from its positional arguments,
// which may mix. A flag's value follows as -name=VALUE or as the next
// argument; "-" alone is positional.
func splitArgs(args []string, flags []cmdFlag) ([]string, error) {
	var pos []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		if !strings.HasPrefix(a, "-") || a == "-" {
			pos = append(pos, a)
			continue
		}
		name, val, hasVal := strings.Cut(a, "=")
		f := findFlag(flags, name)
		switch {
		case f == nil:
			return nil, fmt.Errorf("unknown flag %s", a)
		case f.value == "" && hasVal:
			return nil, fmt.Errorf("%s takes no value", name)
		case f.value != "" && !hasVal:
			if i+1 == len(args) {
				return nil, fmt.Errorf("%s needs %s", name, f.value)
			}
			i++
			val = args[i]
		}
		if err := f.set(name, val); err != nil {
			return nil, err
		}
	}
	return pos, nil
}

// findFlag finds the flag written as name ("-x" or "--x"), or nil.
func findFlag(flags []cmdFlag, name string) *cmdFlag {
	bare := strings.TrimPrefix(strings.TrimPrefix(name, "-"), "-")
	for i := range flags {
		if flags[i].name == bare {
			return &flags[i]
		}
	}
	return nil
}
