//go:build unix

package apply_test

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/agentvcr/agentvcr/cassette"
	"github.com/agentvcr/agentvcr/internal/engine/apply"
)

// A new file gets its recorded mode whatever the umask takes from the mode
// files are created with, on one goroutine or several.
func TestApplyModesUnderUmask(t *testing.T) {
	for _, many := range []bool{false, true} {
		t.Run(fmt.Sprintf("parallel=%v", many), func(t *testing.T) {
			if many {
				parallel(t)
			}
			old := syscall.Umask(0o077)
			t.Cleanup(func() { syscall.Umask(old) })
			s := newSandbox(t)
			os.Mkdir(filepath.Join(s.root, "old"), 0o755)
			var effects []fx
			want := map[string]fs.FileMode{}
			for _, dir := range []string{"old", "new"} {
				if dir == "new" {
					effects = append(effects, mkdir(dir))
				}
				for i, mode := range []string{"0644", "0755", "0600", "0444", "0777", "0644", "0666"} {
					p := fmt.Sprintf("%s/f%d", dir, i)
					e := create(p, p+"\n")
					e.Mode = mode
					effects = append(effects, e)
					var perm uint32
					fmt.Sscanf(mode, "%o", &perm)
					want[p] = fs.FileMode(perm)
				}
			}
			if _, err := s.apply(t, newCassette(t, cassette.Header{}, effects...), apply.ApplyOptions{}); err != nil {
				t.Fatal(err)
			}
			for p, mode := range want {
				if st, err := os.Lstat(filepath.Join(s.root, p)); err != nil || st.Mode() != mode {
					t.Errorf("%s: %v, %v; want %v", p, st.Mode(), err, mode)
				}
			}
		})
	}
}
