package apply_test

import (
	"archive/tar"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentvcr/agentvcr/cassette"
	"github.com/agentvcr/agentvcr/internal/engine/apply"
	"github.com/agentvcr/agentvcr/internal/testsupport/vcrtest"
)

// BenchmarkApply10kVsTar applies a cassette of 10 000 created files of 2
// KiB in 100 directories (read once into a plan, checked, staged, verified,
// committed) and extracts a tar archive of the same files with tar -x, and
// prints the ratio (x-tar).
func BenchmarkApply10kVsTar(b *testing.B) {
	tarBin, err := exec.LookPath("tar")
	if err != nil {
		b.Skip("no tar in PATH")
	}
	dir := b.TempDir()
	var buf bytes.Buffer
	w := vcrtest.NewCassetteWriter(b, &buf, cassette.Header{Argv: []string{"a"}})
	archive := filepath.Join(dir, "same.tar")
	af, err := os.Create(archive)
	if err != nil {
		b.Fatal(err)
	}
	tw := tar.NewWriter(af)
	content := strings.Repeat("y", 2047) + "\n"
	sum := sha256.Sum256([]byte(content))
	for d := range 100 {
		name := fmt.Sprintf("d%02d", d)
		w.WriteEffect(0, cassette.Effect{Op: cassette.OpMkdir, Path: name, Mode: "0755"}, nil, 0)
		tw.WriteHeader(&tar.Header{Typeflag: tar.TypeDir, Name: name + "/", Mode: 0o755})
	}
	for i := range 10000 {
		name := fmt.Sprintf("d%02d/f%05d.txt", i/100, i)
		w.WriteEffect(0, cassette.Effect{Op: cassette.OpCreate, Path: name, Mode: "0644", SHA256: hex.EncodeToString(sum[:])},
			strings.NewReader(content), int64(len(content)))
		tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: name, Mode: 0o644, Size: int64(len(content))})
		tw.Write([]byte(content))
	}
	w.Close(cassette.Footer{})
	if err := errors.Join(tw.Close(), af.Close()); err != nil {
		b.Fatal(err)
	}
	cas := filepath.Join(dir, "many.cassette")
	os.WriteFile(cas, buf.Bytes(), 0o644)
	var applyTook, tarTook time.Duration
	runs := 0
	for b.Loop() {
		runs++
		into := b.TempDir()
		t0 := time.Now()
		res, err := apply.ApplyFile(into, cas, apply.ApplyOptions{})
		if err != nil || len(res.Applied) != 10100 {
			b.Fatalf("apply: %v", err)
		}
		applyTook += time.Since(t0)
		into = b.TempDir()
		t0 = time.Now()
		if out, err := exec.Command(tarBin, "-xf", archive, "-C", into).CombinedOutput(); err != nil {
			b.Fatalf("tar: %v: %s", err, out)
		}
		tarTook += time.Since(t0)
	}
	b.ReportMetric(float64(applyTook.Microseconds())/1000/float64(runs), "ms-apply")
	b.ReportMetric(float64(tarTook.Microseconds())/1000/float64(runs), "ms-tar")
	b.ReportMetric(float64(applyTook)/float64(tarTook), "x-tar")
}
