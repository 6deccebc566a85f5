// Command dist builds agentvcr's release files into a directory (make
// dist): an archive per platform with the binary, checksums.txt, the npm
// packages (dist/npm/*.tgz: agentvcr, the launcher and test helper, and a
// package per platform holding its binary, chosen through
// optionalDependencies) and a Python wheel per platform with the binary
// inside (dist/python/*.whl). Everything is built from the sources in
// packaging/ with the standard library alone, no npm, pip or build backend,
// and is reproducible: file times are the last commit's, owners and orders
// fixed, binaries built with -trimpath and no build id.
//
//	go run ./internal/tools/dist [-out dist] [-version v1.2.3] [-platforms linux/amd64,...]
package main

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"compress/flate"
	"compress/gzip"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
)

// platform is one release target.
type platform struct{ goos, goarch string }

func (p platform) String() string { return p.goos + "/" + p.goarch }

// commands are the programs a release holds, each built from cmd/NAME:
// agentvcr, and the lean stand-in that users link under agent names
// (it hands what it cannot do to agentvcr, installed beside it).
var commands = []string{"agentvcr", "agentvcr-standin"}

// exe is the agentvcr binary's file name on the platform.
func (p platform) exe() string { return p.exeOf("agentvcr") }

// exeOf is the file name of the command's binary on the platform.
func (p platform) exeOf(command string) string {
	if p.goos == "windows" {
		return command + ".exe"
	}
	return command
}

// npmOS and npmCPU are Node's names (process.platform, process.arch).
func (p platform) npmOS() string {
	if p.goos == "windows" {
		return "win32"
	}
	return p.goos
}

func (p platform) npmCPU() string {
	if p.goarch == "amd64" {
		return "x64"
	}
	return p.goarch
}

// npmName is the platform package's name, as in esbuild's @esbuild/linux-x64.
func (p platform) npmName() string { return "@agentvcr/" + p.npmOS() + "-" + p.npmCPU() }

// wheelTag is the wheel's platform tag: a static binary runs on any Linux
// (manylinux and musllinux alike); Go 1.25 needs macOS 12.
func (p platform) wheelTag() string {
	arch := map[string]string{"amd64": "x86_64", "arm64": "aarch64"}[p.goarch]
	switch p.goos {
	case "linux":
		return fmt.Sprintf("manylinux_2_17_%[1]s.manylinux2014_%[1]s.musllinux_1_1_%[1]s", arch)
	case "darwin":
		return "macosx_12_0_" + map[string]string{"amd64": "x86_64", "arm64": "arm64"}[p.goarch]
	case "windows":
		return "win_" + p.goarch
	}
	return ""
}

var allPlatforms = []platform{
	{"linux", "amd64"}, {"linux", "arm64"},
	{"darwin", "amd64"}, {"darwin", "arm64"},
	{"windows", "amd64"}, {"windows", "arm64"},
}

// versions is the release's version in each ecosystem's spelling.
type versions struct {
	tag    string // stamped into the binary: v1.2.3, v0.0.0-dev.42.gabcdef0
	semver string // npm: 1.2.3, 0.0.0-dev.42.gabcdef0
	pep440 string // Python: 1.2.3, 0.0.0.dev42+gabcdef0
}

func main() {
	out := flag.String("out", "dist", "the directory to write (emptied first)")
	version := flag.String("version", "", "the version to release (default: from git describe --tags)")
	only := flag.String("platforms", "", "comma-separated GOOS/GOARCH to build (default: all six)")
	flag.Usage = func() {
		fmt.Fprintln(os.Stderr, "usage: go run ./internal/tools/dist [-out DIR] [-version vX.Y.Z] [-platforms linux/amd64,...]")
		flag.PrintDefaults()
	}
	flag.Parse()
	if err := run(*out, *version, *only); err != nil {
		fmt.Fprintln(os.Stderr, "dist:", err)
		os.Exit(1)
	}
}

func run(out, version, only string) error {
	plats := allPlatforms
	if only != "" {
		plats = nil
		for _, s := range strings.Split(only, ",") {
			goos, goarch, _ := strings.Cut(strings.TrimSpace(s), "/")
			p := platform{goos, goarch}
			if p.wheelTag() == "" || (goarch != "amd64" && goarch != "arm64") {
				return fmt.Errorf("-platforms: %q is not one of linux, darwin, windows on amd64 or arm64", s)
			}
			plats = append(plats, p)
		}
	}
	v, err := releaseVersion(version)
	if err != nil {
		return err
	}
	epoch, err := sourceEpoch()
	if err != nil {
		return err
	}
	if err := os.RemoveAll(out); err != nil {
		return err
	}
	for _, d := range []string{"bin", "npm", "python"} {
		if err := os.MkdirAll(filepath.Join(out, d), 0o755); err != nil {
			return err
		}
	}
	fmt.Printf("agentvcr %s (npm %s, python %s), files dated %s\n", v.tag, v.semver, v.pep440, epoch.UTC().Format(time.RFC3339))

	// Two builds at a time: the linker is the long part, and two cores are common.
	bins := make(map[platform]binaries)
	var mu sync.Mutex
	errs := make(chan error, len(plats))
	sem := make(chan struct{}, max(1, min(2, runtime.NumCPU())))
	var wg sync.WaitGroup
	for _, p := range plats {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			b, err := build(p, v, filepath.Join(out, "bin"))
			if err != nil {
				errs <- err
				return
			}
			mu.Lock()
			bins[p] = b
			mu.Unlock()
		}()
	}
	wg.Wait()
	close(errs)
	if err := <-errs; err != nil {
		return err
	}
	os.RemoveAll(filepath.Join(out, "bin"))

	extras := map[string][]byte{}
	for _, name := range []string{"LICENSE", "README.md"} {
		if b, err := os.ReadFile(name); err == nil {
			extras[name] = b
		}
	}
	var written []string
	for _, p := range plats {
		name, err := archive(out, p, v, bins[p], extras, epoch)
		if err != nil {
			return err
		}
		written = append(written, name)
	}
	npm, err := npmPackages(out, plats, v, bins, epoch)
	if err != nil {
		return err
	}
	written = append(written, npm...)
	wheels, err := pythonWheels(out, plats, v, bins, epoch)
	if err != nil {
		return err
	}
	written = append(written, wheels...)
	return checksums(out, written)
}

// releaseVersion is the version given, or git describe's: a tag vX.Y.Z
// itself, or after it X.Y.(Z+1)-dev.N.gHASH (a pre-release of the next
// patch, as Go's pseudo-versions are); with no tag 0.0.0-dev.N.gHASH, N the
// commits so far. A tree with changes adds .dirty.
func releaseVersion(given string) (versions, error) {
	desc := given
	if desc == "" {
		b, err := exec.Command("git", "describe", "--tags", "--match", "v[0-9]*", "--long", "--always", "--dirty").Output()
		if err != nil {
			return versions{}, fmt.Errorf("git describe: %v (give -version)", err)
		}
		desc = strings.TrimSpace(string(b))
	}
	dirty := strings.HasSuffix(desc, "-dirty")
	desc = strings.TrimSuffix(desc, "-dirty")
	var major, minor, patch, n int
	var hash, pre string
	if m := regexp.MustCompile(`^v(\d+)\.(\d+)\.(\d+)(?:-([0-9A-Za-z.]+))?$`).FindStringSubmatch(desc); m != nil && given != "" {
		major, minor, patch, pre = atoi(m[1]), atoi(m[2]), atoi(m[3]), m[4]
	} else if m := regexp.MustCompile(`^v(\d+)\.(\d+)\.(\d+)-(\d+)-g([0-9a-f]+)$`).FindStringSubmatch(desc); m != nil {
		major, minor, patch, n, hash = atoi(m[1]), atoi(m[2]), atoi(m[3]), atoi(m[4]), m[5]
		if n > 0 {
			patch++
		}
	} else if regexp.MustCompile(`^[0-9a-f]{7,}$`).MatchString(desc) {
		hash = desc
		b, err := exec.Command("git", "rev-list", "--count", "HEAD").Output()
		if err != nil {
			return versions{}, fmt.Errorf("git rev-list: %v", err)
		}
		n = atoi(strings.TrimSpace(string(b)))
	} else {
		return versions{}, fmt.Errorf("version %q is not vX.Y.Z or vX.Y.Z-PRERELEASE", desc)
	}
	core := fmt.Sprintf("%d.%d.%d", major, minor, patch)
	v := versions{semver: core, pep440: core}
	switch {
	case pre != "":
		v.semver += "-" + pre
		v.pep440 += pep440Pre(pre)
	case hash != "" && (n > 0 || major+minor+patch == 0):
		v.semver += fmt.Sprintf("-dev.%d.g%s", n, hash)
		v.pep440 += fmt.Sprintf(".dev%d+g%s", n, hash)
	}
	if dirty {
		if strings.Contains(v.semver, "-") {
			v.semver += ".dirty"
		} else {
			v.semver += "-dirty"
		}
		if strings.Contains(v.pep440, "+") {
			v.pep440 += ".dirty"
		} else {
			v.pep440 += "+dirty"
		}
	}
	v.tag = "v" + v.semver
	return v, nil
}

// pep440Pre spells a semver pre-release (rc.1, beta.2, alpha) as PEP 440 does.
func pep440Pre(pre string) string {
	m := regexp.MustCompile(`^(alpha|a|beta|b|rc)\.?(\d*)$`).FindStringSubmatch(pre)
	if m == nil {
		return ".dev0+" + strings.ReplaceAll(pre, "-", ".")
	}
	short := map[string]string{"alpha": "a", "a": "a", "beta": "b", "b": "b", "rc": "rc"}[m[1]]
	return short + cmpOr(m[2], "0")
}

func cmpOr(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

func atoi(s string) int { n, _ := strconv.Atoi(s); return n }

// sourceEpoch is the time every file is dated: $SOURCE_DATE_EPOCH, else the
// last commit's.
func sourceEpoch() (time.Time, error) {
	s := os.Getenv("SOURCE_DATE_EPOCH")
	if s == "" {
		b, err := exec.Command("git", "log", "-1", "--format=%ct").Output()
		if err != nil {
			return time.Time{}, fmt.Errorf("git log: %v (set SOURCE_DATE_EPOCH)", err)
		}
		s = strings.TrimSpace(string(b))
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return time.Time{}, fmt.Errorf("SOURCE_DATE_EPOCH=%q: %v", s, err)
	}
	return time.Unix(n, 0).UTC(), nil
}

// binaries are a platform's built commands, by file name.
type binaries map[string][]byte

// build builds the commands of p into dir and returns them.
func build(p platform, v versions, dir string) (binaries, error) {
	dir = filepath.Join(dir, p.goos+"_"+p.goarch)
	args := []string{"build", "-trimpath", "-buildvcs=false",
		"-ldflags", "-s -w -buildid= -X github.com/agentvcr/agentvcr/internal/tools/cli.stamped=" + v.tag,
		"-o", dir + string(filepath.Separator)}
	for _, c := range commands {
		args = append(args, "./cmd/"+c)
	}
	cmd := exec.Command("go", args...)
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS="+p.goos, "GOARCH="+p.goarch, "GOFLAGS=-mod=readonly")
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("go build for %s: %v", p, err)
	}
	fmt.Printf("built %s\n", p)
	bins := binaries{}
	for _, c := range commands {
		b, err := os.ReadFile(filepath.Join(dir, p.exeOf(c)))
		if err != nil {
			return nil, err
		}
		bins[p.exeOf(c)] = b
	}
	return bins, nil
}

// file is one file of an archive or package.
type file struct {
	name string
	data []byte
	mode fs.FileMode
}

// archive writes agentvcr_VERSION_OS_ARCH.tar.gz (.zip for Windows): a
// directory of that name holding the binaries, README.md and LICENSE.
func archive(out string, p platform, v versions, bins binaries, extras map[string][]byte, epoch time.Time) (string, error) {
	base := fmt.Sprintf("agentvcr_%s_%s_%s", v.semver, p.goos, p.goarch)
	var files []file
	for _, name := range sortedKeys(bins) {
		files = append(files, file{base + "/" + name, bins[name], 0o755})
	}
	for _, name := range sortedKeys(extras) {
		files = append(files, file{base + "/" + name, extras[name], 0o644})
	}
	var data []byte
	var err error
	name := base + ".tar.gz"
	if p.goos == "windows" {
		name = base + ".zip"
		data, err = zipOf(files, epoch)
	} else {
		data, err = tgzOf(files, epoch)
	}
	if err != nil {
		return "", err
	}
	return name, writeOut(out, name, data)
}

func writeOut(out, name string, data []byte) error {
	if err := os.WriteFile(filepath.Join(out, filepath.FromSlash(name)), data, 0o644); err != nil {
		return err
	}
	fmt.Printf("wrote %s/%s (%.1f MiB)\n", out, name, float64(len(data))/(1<<20))
	return nil
}

// tgzOf is a gzipped tar of files, with their directories, owned by root,
// dated epoch.
func tgzOf(files []file, epoch time.Time) ([]byte, error) {
	var buf bytes.Buffer
	gz, _ := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	tw := tar.NewWriter(gz)
	dirs := map[string]bool{}
	for _, f := range files {
		for d := path.Dir(f.name); d != "." && !dirs[d]; d = path.Dir(d) {
			dirs[d] = true
		}
	}
	for _, d := range sortedKeys(dirs) {
		if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeDir, Name: d + "/", Mode: 0o755, ModTime: epoch, Format: tar.FormatPAX}); err != nil {
			return nil, err
		}
	}
	for _, f := range files {
		h := &tar.Header{Typeflag: tar.TypeReg, Name: f.name, Mode: int64(f.mode), Size: int64(len(f.data)), ModTime: epoch, Format: tar.FormatPAX}
		if err := tw.WriteHeader(h); err != nil {
			return nil, err
		}
		if _, err := tw.Write(f.data); err != nil {
			return nil, err
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	if err := gz.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// zipOf is a zip of files, dated epoch, with Unix modes (which pip and
// unzip apply).
func zipOf(files []file, epoch time.Time) ([]byte, error) {
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	zw.RegisterCompressor(zip.Deflate, func(w io.Writer) (io.WriteCloser, error) {
		return flate.NewWriter(w, flate.BestCompression)
	})
	if epoch.Year() < 1980 {
		epoch = time.Date(1980, 1, 1, 0, 0, 0, 0, time.UTC)
	}
	for _, f := range files {
		h := &zip.FileHeader{Name: f.name, Method: zip.Deflate, Modified: epoch}
		h.SetMode(f.mode)
		w, err := zw.CreateHeader(h)
		if err != nil {
			return nil, err
		}
		if _, err := w.Write(f.data); err != nil {
			return nil, err
		}
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// checksums writes checksums.txt: sha256sum's format, for sha256sum -c in out.
func checksums(out string, names []string) error {
	sort.Strings(names)
	var b strings.Builder
	for _, name := range names {
		data, err := os.ReadFile(filepath.Join(out, filepath.FromSlash(name)))
		if err != nil {
			return err
		}
		sum := sha256.Sum256(data)
		fmt.Fprintf(&b, "%s  %s\n", hex.EncodeToString(sum[:]), name)
	}
	return writeOut(out, "checksums.txt", []byte(b.String()))
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// sourceFiles reads the files under dir (a directory of packaging/),
// named relative to it with slashes, in order.
func sourceFiles(dir string) ([]file, error) {
	var files []file
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		mode := fs.FileMode(0o644)
		if info, err := d.Info(); err == nil && info.Mode()&0o111 != 0 {
			mode = 0o755
		}
		files = append(files, file{filepath.ToSlash(rel), data, mode})
		return nil
	})
	sort.Slice(files, func(i, j int) bool { return files[i].name < files[j].name })
	return files, err
}

// b64sha256 is a RECORD file's hash of data.
func b64sha256(data []byte) string {
	sum := sha256.Sum256(data)
	return "sha256=" + base64.RawURLEncoding.EncodeToString(sum[:])
}
