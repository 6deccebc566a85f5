#!/usr/bin/env python3
"""Checks what make dist wrote: every archive is there and holds its
platform's binaries, agentvcr and agentvcr-standin (ELF, Mach-O or PE, of
the right architecture, looked at in its header), checksums.txt lists every
file with its sha256, every npm package and wheel holds its platform's
binaries too. Usage: distcheck.py DIST"""

import hashlib
import io
import os
import re
import struct
import sys
import tarfile
import zipfile

PLATFORMS = [(o, a) for o in ("linux", "darwin", "windows") for a in ("amd64", "arm64")]
COMMANDS = ("agentvcr", "agentvcr-standin")


def kind(data):
    """(os, arch) of an executable, from its header."""
    if data[:4] == b"\x7fELF":
        machine = struct.unpack_from("<H", data, 18)[0]
        return "linux", {0x3E: "amd64", 0xB7: "arm64"}.get(machine, hex(machine))
    if data[:4] == b"\xcf\xfa\xed\xfe":
        cpu = struct.unpack_from("<I", data, 4)[0]
        return "darwin", {0x01000007: "amd64", 0x0100000C: "arm64"}.get(cpu, hex(cpu))
    if data[:2] == b"MZ":
        pe = struct.unpack_from("<I", data, 0x3C)[0]
        if data[pe:pe + 4] == b"PE\0\0":
            machine = struct.unpack_from("<H", data, pe + 4)[0]
            return "windows", {0x8664: "amd64", 0xAA64: "arm64"}.get(machine, hex(machine))
    return "unknown", data[:4].hex()


def members(path):
    """name -> (bytes, mode) of an archive's files."""
    out = {}
    if path.endswith((".zip", ".whl")):
        with zipfile.ZipFile(path) as z:
            for i in z.infolist():
                if not i.is_dir():
                    out[i.filename] = (z.read(i), (i.external_attr >> 16) & 0o777)
    else:
        with tarfile.open(path, "r:gz") as t:
            for m in t.getmembers():
                if m.isfile():
                    out[m.name] = (t.extractfile(m).read(), m.mode)
    return out


def main(dist):
    problems = []
    names = sorted(
        os.path.relpath(os.path.join(d, f), dist).replace(os.sep, "/")
        for d, _, fs in os.walk(dist) for f in fs if f != "checksums.txt"
    )
    archives = [n for n in names if n.startswith("agentvcr_")]
    version = None
    for o, a in PLATFORMS:
        ext = ".zip" if o == "windows" else ".tar.gz"
        found = [n for n in archives if n.endswith("_%s_%s%s" % (o, a, ext))]
        if len(found) != 1:
            problems.append("no archive for %s/%s" % (o, a))
            continue
        name = found[0]
        version = name[len("agentvcr_"):-len("_%s_%s%s" % (o, a, ext))]
        files = members(os.path.join(dist, name))
        good = True
        for command in COMMANDS:
            exe = "agentvcr_%s_%s_%s/%s%s" % (version, o, a, command, ".exe" if o == "windows" else "")
            if exe not in files:
                problems.append("%s: no %s in it (has %s)" % (name, exe, ", ".join(sorted(files))))
                good = False
                continue
            data, mode = files[exe]
            if kind(data) != (o, a):
                problems.append("%s: %s is %s/%s, not %s/%s" % ((name, command) + kind(data) + (o, a)))
                good = False
            if o != "windows" and mode & 0o111 == 0:
                problems.append("%s: %s is not executable (mode %o)" % (name, command, mode))
                good = False
        if good:
            print("ok %-52s %5.1f MiB  %s/%s binaries" % (name, os.path.getsize(os.path.join(dist, name)) / 2**20, o, a))
    # Packages: each platform's npm package and wheel holds its binary.
    for n in names:
        if re.match(r"npm/agentvcr-(linux|darwin|win32)-(x64|arm64)-", n) or n.endswith(".whl"):
            files = members(os.path.join(dist, n))
            bins = [f for f in files if re.search(r"(^|/)bin/agentvcr(-standin)?(\.exe)?$", f)]
            if len(bins) != len(COMMANDS):
                problems.append("%s: %d binaries in it, want %s" % (n, len(bins), " and ".join(COMMANDS)))
                continue
            kinds = set(kind(files[b][0]) for b in bins)
            o, a = kinds.pop() if len(kinds) == 1 else ("mixed", "platforms")
            want = None
            for po, pa in PLATFORMS:
                npm = "%s-%s" % ("win32" if po == "windows" else po, "x64" if pa == "amd64" else pa)
                tags = {"linux": "manylinux_2_17_" + ("x86_64" if pa == "amd64" else "aarch64"),
                        "darwin": "macosx_12_0_" + ("x86_64" if pa == "amd64" else "arm64"),
                        "windows": "win_" + pa}[po]
                if ("npm/agentvcr-%s-" % npm) in n or (n.endswith(".whl") and tags + "." in n + "."):
                    want = (po, pa)
            if (o, a) != want:
                problems.append("%s: holds a %s/%s binary, want %s" % (n, o, a, want))
            else:
                print("ok %-52s %5.1f MiB  %s/%s binaries" % (n[:52], os.path.getsize(os.path.join(dist, n)) / 2**20, o, a))
    # checksums.txt: sha256sum -c's format, every file listed, every sum right.
    listed = {}
    with open(os.path.join(dist, "checksums.txt")) as f:
        for line in f:
            m = re.match(r"^([0-9a-f]{64})  (\S+)\n$", line)
            if not m:
                problems.append("checksums.txt: bad line %r" % line)
                continue
            listed[m.group(2)] = m.group(1)
    for n in names:
        with open(os.path.join(dist, n), "rb") as f:
            got = hashlib.sha256(f.read()).hexdigest()
        if listed.get(n) != got:
            problems.append("checksums.txt: %s %s" % (n, "missing" if n not in listed else "has a wrong sum"))
    for n in listed:
        if n not in names:
            problems.append("checksums.txt lists %s, which is not there" % n)
    print("ok checksums.txt: %d files" % len(listed))
    for p in problems:
        print("FAIL", p)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else "dist"))
