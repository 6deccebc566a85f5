package safefile_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentvcr/agentvcr/internal/engine/safefile"
	"github.com/agentvcr/agentvcr/internal/testsupport/vcrtest"
)

func TestReadFileRefusesWhatIsNotAFile(t *testing.T) {
	dir := t.TempDir()
	secret := filepath.Join(t.TempDir(), "id_ed25519")
	os.WriteFile(secret, []byte("-----BEGIN OPENSSH PRIVATE KEY-----\n"), 0o600)
	link := filepath.Join(dir, "answer.golden")
	os.Symlink(secret, link)
	fifo := filepath.Join(dir, "fifo")
	if err := vcrtest.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	big := filepath.Join(dir, "big")
	if f, err := os.Create(big); err == nil {
		f.Truncate(1 << 30) // sparse: costs no disk
		f.Close()
	}
	good := filepath.Join(dir, "good")
	os.WriteFile(good, []byte("hello\n"), 0o644)
	for _, tc := range []struct {
		path string
		want error
	}{
		{link, safefile.ErrLink},
		{fifo, safefile.ErrNotRegular},
		{"/dev/zero", safefile.ErrNotRegular},
		{dir, safefile.ErrNotRegular},
		{big, safefile.ErrTooLarge},
	} {
		var data []byte
		var err error
		vcrtest.NoHang(t, "ReadFile "+tc.path, func() { data, err = safefile.ReadFile(tc.path, 1<<20) })
		if !errors.Is(err, tc.want) || data != nil {
			t.Errorf("%s: %v, %d bytes; want %v", tc.path, err, len(data), tc.want)
			continue
		}
		if msg := err.Error(); strings.Count(msg, "\n") > 0 || !strings.HasPrefix(msg, tc.path+" ") || strings.Contains(msg, "BEGIN") {
			t.Errorf("%s: message %q", tc.path, msg)
		}
	}
	if data, err := safefile.ReadFile(good, 6); err != nil || string(data) != "hello\n" {
		t.Errorf("good: %q, %v", data, err)
	}
	if _, err := safefile.ReadFile(good, 5); !errors.Is(err, safefile.ErrTooLarge) || !strings.Contains(err.Error(), "(5 bytes at most)") {
		t.Errorf("good, bound 5: %v", err)
	}
	if _, err := safefile.ReadFile(filepath.Join(dir, "none"), 5); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing: %v", err)
	}
}

// A file written in place (a take counter) is never a link's target, a
// FIFO or another name of a file elsewhere: the target is left as it was.
func TestOpenWriteRefusesLinks(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(t.TempDir(), "bashrc")
	os.WriteFile(target, []byte("keep me\n"), 0o644)
	soft, hard, fifo := filepath.Join(dir, "soft"), filepath.Join(dir, "hard"), filepath.Join(dir, "fifo")
	os.Symlink(target, soft)
	if err := os.Link(target, hard); err != nil {
		t.Skip("no hard links here:", err)
	}
	vcrtest.Mkfifo(fifo, 0o600)
	for path, want := range map[string]error{soft: safefile.ErrLink, hard: safefile.ErrShared, fifo: safefile.ErrNotRegular, "/dev/null": safefile.ErrNotRegular} {
		vcrtest.NoHang(t, "OpenWrite "+path, func() {
			f, err := safefile.OpenWrite(path, os.O_CREATE|os.O_RDWR, 0o644)
			if err == nil {
				f.Truncate(0)
				f.Close()
			}
			if !errors.Is(err, want) {
				t.Errorf("%s: %v, want %v", path, err, want)
			}
		})
	}
	if data, _ := os.ReadFile(target); string(data) != "keep me\n" {
		t.Errorf("the target was changed: %q", data)
	}
	if err := safefile.CheckRegular(soft); !errors.Is(err, safefile.ErrLink) {
		t.Errorf("CheckRegular(link): %v", err)
	}
	if err := safefile.CheckRegular(filepath.Join(dir, "none")); err != nil {
		t.Errorf("CheckRegular(missing): %v", err)
	}
	f, err := safefile.OpenWrite(filepath.Join(dir, "new"), os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	f.Close()
}

// A file of a directory may be a link to another of its files, never to
// one outside it; a FIFO among them is refused without a hang.
func TestOpenInDir(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "a"), []byte("a\n"), 0o644)
	os.Symlink("a", filepath.Join(dir, "inside"))
	secret := filepath.Join(t.TempDir(), "token")
	os.WriteFile(secret, []byte("ghp_secret\n"), 0o600)
	os.Symlink(secret, filepath.Join(dir, "out"))
	os.Symlink("../"+filepath.Base(filepath.Dir(secret))+"/token", filepath.Join(dir, "up"))
	vcrtest.Mkfifo(filepath.Join(dir, "fifo"), 0o600)
	for name, want := range map[string]error{"a": nil, "inside": nil, "out": safefile.ErrLink, "up": safefile.ErrLink, "fifo": safefile.ErrNotRegular} {
		vcrtest.NoHang(t, name, func() {
			f, err := safefile.OpenInDir(dir, name)
			if f != nil {
				f.Close()
			}
			if !errors.Is(err, want) || want == nil && err != nil {
				t.Errorf("%s: %v, want %v", name, err, want)
			}
			if err != nil && (strings.Contains(err.Error(), "ghp_") || !strings.HasPrefix(err.Error(), filepath.Join(dir, name)+" ")) {
				t.Errorf("%s: message %q", name, err)
			}
		})
	}
}
