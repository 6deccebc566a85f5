package term

import (
	"io"
	"os"
)

// Piped returns stdin when it carries data (a pipe or a file), nil for
// a terminal or /dev/null, which the agent must not wait on.
func Piped(stdin io.Reader) io.Reader {
	f, ok := stdin.(*os.File)
	if !ok {
		return stdin
	}
	st, err := f.Stat()
	if err != nil || st.Mode()&os.ModeCharDevice != 0 {
		return nil
	}
	return f
}
