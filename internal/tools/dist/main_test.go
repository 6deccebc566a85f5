package main

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"io"
	"testing"
	"time"
)

func TestReleaseVersionSpellings(t *testing.T) {
	for _, tc := range []struct{ given, tag, semver, pep440 string }{
		{"v1.2.3", "v1.2.3", "1.2.3", "1.2.3"},
		{"v1.2.3-rc.1", "v1.2.3-rc.1", "1.2.3-rc.1", "1.2.3rc1"},
		{"v1.2.3-4-gabcdef0", "v1.2.4-dev.4.gabcdef0", "1.2.4-dev.4.gabcdef0", "1.2.4.dev4+gabcdef0"},
		{"v1.2.3-0-gabcdef0-dirty", "v1.2.3-dirty", "1.2.3-dirty", "1.2.3+dirty"},
	} {
		v, err := releaseVersion(tc.given)
		if err != nil || v.tag != tc.tag || v.semver != tc.semver || v.pep440 != tc.pep440 {
			t.Errorf("releaseVersion(%q) = %+v, %v; want %s %s %s", tc.given, v, err, tc.tag, tc.semver, tc.pep440)
		}
	}
	if _, err := releaseVersion("banana"); err == nil {
		t.Error("releaseVersion(banana): no error")
	}
}

func TestPlatformNames(t *testing.T) {
	for _, tc := range []struct {
		p              platform
		npm, wheel, ex string
	}{
		{platform{"linux", "amd64"}, "@agentvcr/linux-x64", "manylinux_2_17_x86_64.manylinux2014_x86_64.musllinux_1_1_x86_64", "agentvcr"},
		{platform{"darwin", "arm64"}, "@agentvcr/darwin-arm64", "macosx_12_0_arm64", "agentvcr"},
		{platform{"windows", "amd64"}, "@agentvcr/win32-x64", "win_amd64", "agentvcr.exe"},
	} {
		if tc.p.npmName() != tc.npm || tc.p.wheelTag() != tc.wheel || tc.p.exe() != tc.ex {
			t.Errorf("%s: %s %s %s", tc.p, tc.p.npmName(), tc.p.wheelTag(), tc.p.exe())
		}
	}
}

// The same files give the same archive bytes: dates, owners and order fixed.
func TestArchivesAreReproducible(t *testing.T) {
	files := []file{{"d/agentvcr", []byte("\x7fELF..."), 0o755}, {"d/README.md", []byte("# hi\n"), 0o644}}
	epoch := time.Unix(1700000000, 0)
	a, _ := tgzOf(files, epoch)
	b, _ := tgzOf(files, epoch)
	z1, _ := zipOf(files, epoch)
	z2, _ := zipOf(files, epoch)
	if !bytes.Equal(a, b) || !bytes.Equal(z1, z2) {
		t.Fatal("two archives of the same files differ")
	}
	gz, err := gzip.NewReader(bytes.NewReader(a))
	if err != nil {
		t.Fatal(err)
	}
	tr := tar.NewReader(gz)
	var names []string
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if h.Name == "d/agentvcr" && h.Mode != 0o755 || !h.ModTime.Equal(epoch) || h.Uid != 0 {
			t.Errorf("%s: mode %o, time %v, uid %d", h.Name, h.Mode, h.ModTime, h.Uid)
		}
		names = append(names, h.Name)
	}
	if len(names) != 3 || names[0] != "d/" {
		t.Errorf("entries %q", names)
	}
}
