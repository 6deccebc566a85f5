package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// placeholder is the version the sources in packaging/ carry: every
// occurrence becomes the release's.
const placeholder = "0.0.0-unreleased"

// npmPackages writes dist/npm/agentvcr-VERSION.tgz (packaging/npm/agentvcr)
// and agentvcr-OS-CPU-VERSION.tgz for each platform, as npm pack names and
// lays them out (every file under package/).
func npmPackages(out string, plats []platform, v versions, bins map[platform]binaries, epoch time.Time) ([]string, error) {
	src, err := sourceFiles(filepath.Join("packaging", "npm", "agentvcr"))
	if err != nil {
		return nil, err
	}
	var names []string
	var main []file
	for _, f := range src {
		f.data = bytes.ReplaceAll(f.data, []byte(placeholder), []byte(v.semver))
		f.name = "package/" + f.name
		main = append(main, f)
	}
	name := "npm/agentvcr-" + v.semver + ".tgz"
	if err := writeTgz(out, name, main, epoch); err != nil {
		return nil, err
	}
	names = append(names, name)
	for _, p := range plats {
		pkg := map[string]any{
			"name":            p.npmName(),
			"version":         v.semver,
			"description":     fmt.Sprintf("The %s-%s binary of agentvcr (installed by the agentvcr package).", p.npmOS(), p.npmCPU()),
			"homepage":        "https://github.com/agentvcr/agentvcr",
			"repository":      map[string]string{"type": "git", "url": "git+https://github.com/agentvcr/agentvcr.git"},
			"os":              []string{p.npmOS()},
			"cpu":             []string{p.npmCPU()},
			"files":           []string{"bin/"},
			"preferUnplugged": true,
		}
		meta, err := json.MarshalIndent(pkg, "", "  ")
		if err != nil {
			return nil, err
		}
		readme := fmt.Sprintf("# %s\n\nThe agentvcr binaries for %s on %s (agentvcr, and the lean stand-in agentvcr-standin), which the `agentvcr`\npackage installs as an optional dependency on that platform. Install `agentvcr`, not this package.\n", p.npmName(), p.npmOS(), p.npmCPU())
		files := []file{{"package/README.md", []byte(readme), 0o644}}
		for _, name := range sortedKeys(bins[p]) {
			files = append(files, file{"package/bin/" + name, bins[p][name], 0o755})
		}
		files = append(files, file{"package/package.json", append(meta, '\n'), 0o644})
		name := "npm/agentvcr-" + p.npmOS() + "-" + p.npmCPU() + "-" + v.semver + ".tgz"
		if err := writeTgz(out, name, files, epoch); err != nil {
			return nil, err
		}
		names = append(names, name)
	}
	return names, nil
}

func writeTgz(out, name string, files []file, epoch time.Time) error {
	data, err := tgzOf(files, epoch)
	if err != nil {
		return err
	}
	return writeOut(out, name, data)
}

// pythonWheels writes dist/python/agentvcr-VERSION-py3-none-TAG.whl for
// each platform: the package of packaging/python/agentvcr with the binaries
// in agentvcr/bin/ (agentvcr, agentvcr-standin), and the agentvcr console
// script.
func pythonWheels(out string, plats []platform, v versions, bins map[platform]binaries, epoch time.Time) ([]string, error) {
	src, err := sourceFiles(filepath.Join("packaging", "python", "agentvcr"))
	if err != nil {
		return nil, err
	}
	metadata, err := os.ReadFile(filepath.Join("packaging", "python", "METADATA.in"))
	if err != nil {
		return nil, err
	}
	var names []string
	for _, p := range plats {
		distInfo := "agentvcr-" + v.pep440 + ".dist-info/"
		var files []file
		for _, f := range src {
			if strings.HasSuffix(f.name, ".pyc") || strings.Contains(f.name, "__pycache__") {
				continue
			}
			files = append(files, file{"agentvcr/" + f.name, bytes.ReplaceAll(f.data, []byte(placeholder), []byte(v.pep440)), 0o644})
		}
		for _, name := range sortedKeys(bins[p]) {
			files = append(files, file{"agentvcr/bin/" + name, bins[p][name], 0o755})
		}
		files = append(files,
			file{distInfo + "METADATA", bytes.ReplaceAll(metadata, []byte("{version}"), []byte(v.pep440)), 0o644},
			file{distInfo + "WHEEL", []byte(wheelFile(p)), 0o644},
			file{distInfo + "entry_points.txt", []byte("[console_scripts]\nagentvcr = agentvcr.__main__:main\n"), 0o644},
		)
		var record strings.Builder
		for _, f := range files {
			fmt.Fprintf(&record, "%s,%s,%d\n", f.name, b64sha256(f.data), len(f.data))
		}
		fmt.Fprintf(&record, "%sRECORD,,\n", distInfo)
		files = append(files, file{distInfo + "RECORD", []byte(record.String()), 0o644})
		data, err := zipOf(files, epoch)
		if err != nil {
			return nil, err
		}
		name := "python/agentvcr-" + v.pep440 + "-py3-none-" + p.wheelTag() + ".whl"
		if err := writeOut(out, name, data); err != nil {
			return nil, err
		}
		names = append(names, name)
	}
	return names, nil
}

// wheelFile is a wheel's WHEEL: one Tag line for each tag of the
// platform's compressed tag set.
func wheelFile(p platform) string {
	var b strings.Builder
	b.WriteString("Wheel-Version: 1.0\nGenerator: agentvcr internal/tools/dist\nRoot-Is-Purelib: false\n")
	for _, t := range strings.Split(p.wheelTag(), ".") {
		fmt.Fprintf(&b, "Tag: py3-none-%s\n", t)
	}
	return b.String()
}
