"""The cuda plugin's device code against what its kernel types claim.

Reads the plugin's .nv_fatbin section (one fat binary per kernel source, each a list of
machine-code and PTX entries) and checks that every source embeds exactly the configured
architectures, and that the architectures each cuda kernel type declares (`tileops ops --json`)
are backed by that code: an empty list claims every architecture, which needs PTX of
compute_75 or lower (the lowest compute capability CUDA 13 supports); a list needs machine
code for each architecture in it.

Usage: embedded_code_test.py PLUGIN.so CLI SOURCES ARCHS PTX
  SOURCES  how many kernel sources the plugin compiles (one fat binary each)
  ARCHS    the machine code it must embed, comma-separated (80,89,90a)
  PTX      the PTX it must embed, comma-separated (75,90)
"""

import json
import os
import struct
import subprocess
import sys

FATBIN_MAGIC = 0xBA55ED50
KIND_PTX, KIND_ELF = 1, 2
# Entry flag of architecture-specific code (sm_90a rather than sm_90).
FLAG_ARCH_SPECIFIC = 0x100000
LOWEST_CUDA_ARCH = 75


def section(path, name):
    """The bytes of ELF section `name` of the file at `path` (64-bit little-endian ELF)."""
    with open(path, "rb") as f:
        data = f.read()
    if data[:4] != b"\x7fELF" or data[4] != 2 or data[5] != 1:
        raise SystemExit(f"FAIL: {path} is not a 64-bit little-endian ELF file")
    shoff, = struct.unpack_from("<Q", data, 0x28)
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", data, 0x3A)

    def header(i):
        return struct.unpack_from("<IIQQQQ", data, shoff + i * shentsize)

    names_offset = header(shstrndx)[4]
    for i in range(shnum):
        name_at, _, _, _, offset, size = header(i)
        end = data.index(b"\0", names_offset + name_at)
        if data[names_offset + name_at:end].decode() == name:
            return data[offset:offset + size]
    raise SystemExit(f"FAIL: {os.path.basename(path)} has no {name} section")


def fat_binaries(blob):
    """One sorted list of entry names (sm_90a, compute_75, ...) per fat binary in `blob`."""
    binaries = []
    at = 0
    while at + 16 <= len(blob):
        magic, _, header_size, body_size = struct.unpack_from("<IHHQ", blob, at)
        if magic != FATBIN_MAGIC:
            at += 8  # fat binaries are 8-byte aligned; the linker pads between them
            continue
        entry = at + header_size
        end = entry + body_size
        if end > len(blob):
            raise SystemExit(f"FAIL: a fat binary at offset {at} runs past the section's end")
        names = []
        while entry < end:
            kind, _, entry_header, payload = struct.unpack_from("<HHIQ", blob, entry)
            arch, = struct.unpack_from("<I", blob, entry + 28)
            flags, = struct.unpack_from("<Q", blob, entry + 40)
            if kind == KIND_ELF:
                names.append(f"sm_{arch}" + ("a" if flags & FLAG_ARCH_SPECIFIC else ""))
            elif kind == KIND_PTX:
                names.append(f"compute_{arch}")
            else:
                raise SystemExit(f"FAIL: a fat binary entry of unknown kind {kind}")
            if entry_header == 0:
                raise SystemExit("FAIL: a fat binary entry with an empty header")
            entry += entry_header + payload
        binaries.append(sorted(names))
        at = end
    return binaries


def main():
    if len(sys.argv) != 6:
        raise SystemExit(__doc__)
    plugin, cli, sources, archs, ptx = sys.argv[1:]
    expected = sorted([f"sm_{a}" for a in archs.split(",") if a] + [f"compute_{p}" for p in ptx.split(",") if p])
    failures = []

    binaries = fat_binaries(section(plugin, ".nv_fatbin"))
    if len(binaries) != int(sources):
        failures.append(f"{len(binaries)} fat binaries, expected one per kernel source ({sources})")
    for i, names in enumerate(binaries):
        if names != expected:
            failures.append(f"fat binary {i} embeds {' '.join(names)}, expected {' '.join(expected)}")

    ops = json.loads(subprocess.run([cli, "ops", "--json"], check=True, capture_output=True, text=True).stdout)
    types = [(op["name"], k) for op in ops for i in op["interfaces"] for k in i["kernels"] if k["plugin"] == "cuda"]
    if not types:
        failures.append("the cuda plugin registered no kernel type (is it in the plugin path?)")
    lowest_ptx = min((int(p) for p in ptx.split(",") if p), default=None)
    for op, k in types:
        claim = k["supported_archs"]
        if not claim:
            if lowest_ptx is None or lowest_ptx > LOWEST_CUDA_ARCH:
                failures.append(f"{op}/{k['key']} claims every architecture, but the plugin embeds no PTX of "
                                f"compute_{LOWEST_CUDA_ARCH} or lower (PTX: {ptx or 'none'})")
        for arch in claim:
            if not any(f"sm_{arch}" in names or f"sm_{arch}a" in names for names in binaries):
                failures.append(f"{op}/{k['key']} claims architecture {arch}, but the plugin embeds no sm_{arch} code")

    for f in failures:
        print(f"FAIL: {f}")
    if failures:
        sys.exit(1)
    print(f"{os.path.basename(plugin)}: {len(binaries)} kernel sources each embed {' '.join(expected)}; "
          f"{len(types)} kernel types' architectures are backed by them")


if __name__ == "__main__":
    main()
