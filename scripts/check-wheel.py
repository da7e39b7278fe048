#!/usr/bin/env python3
"""Checks a memplan wheel's tags against what its extension needs.

    scripts/check-wheel.py target/wheels/memplan-*.whl

- The tags (file name and the WHEEL file agree): `cp39-abi3` (one wheel for
  CPython 3.9 and later) and `manylinux_2_XX_<arch>` (or its legacy alias).
- The glibc floor: `objdump -T` lists the versioned symbols the extension
  module imports; the newest `GLIBC_2.YY` among them must not exceed the
  tag's 2.XX (otherwise pip would install it where it cannot load).
- The extension links no libpython (an abi3 module must not) and needs no
  library beyond the manylinux policy's (the C library, libgcc_s, libm,
  libpthread, libdl, librt, the loader).

Prints what it measured; exits 1 when a check fails. Standard library and
binutils' objdump only.
"""

from __future__ import annotations

import re
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path
from typing import List, Tuple

ALLOWED_LIBS = re.compile(
    r"^(libc|libm|libdl|librt|libpthread|libgcc_s|libutil|ld-linux-[\w-]+|ld-linux|libcrypt)\.so(\.\d+)*$"
)
LEGACY = {"manylinux1": (2, 5), "manylinux2010": (2, 12), "manylinux2014": (2, 17)}


def version(text: str) -> Tuple[int, ...]:
    return tuple(int(p) for p in text.split("."))


def main(argv: List[str]) -> int:
    if len(argv) != 1:
        print(__doc__, file=sys.stderr)
        return 2
    wheel = Path(argv[0])
    failures: List[str] = []
    # name-version-python-abi-platform.whl
    name, ver, python_tag, abi_tag, platform_tag = wheel.name[: -len(".whl")].split("-")
    if (python_tag, abi_tag) != ("cp39", "abi3"):
        failures.append(f"python/abi tags {python_tag}-{abi_tag}, expected cp39-abi3")
    floors = []
    for platform in platform_tag.split("."):
        m = re.fullmatch(r"manylinux_(\d+)_(\d+)_(\w+)", platform)
        legacy = re.fullmatch(r"(manylinux1|manylinux2010|manylinux2014)_(\w+)", platform)
        if m:
            floors.append((int(m.group(1)), int(m.group(2))))
        elif legacy:
            floors.append(LEGACY[legacy.group(1)])
        else:
            failures.append(f"platform tag {platform} is not a manylinux tag")
    tag_floor = min(floors) if floors else None

    with zipfile.ZipFile(wheel) as z, tempfile.TemporaryDirectory() as tmp:
        wheel_file = next(n for n in z.namelist() if n.endswith(".dist-info/WHEEL"))
        tags = {
            line.split(":", 1)[1].strip()
            for line in z.read(wheel_file).decode().splitlines()
            if line.startswith("Tag:")
        }
        expected = {f"{python_tag}-{abi_tag}-{p}" for p in platform_tag.split(".")}
        if tags != expected:
            failures.append(f"WHEEL tags {sorted(tags)} differ from the file name's {sorted(expected)}")
        modules = [n for n in z.namelist() if re.search(r"\.so(\.\d+)*$", n)]
        if len(modules) != 1:
            failures.append(f"expected one extension module, found {modules}")
        needed_glibc: List[Tuple[int, ...]] = []
        for module in modules:
            path = Path(z.extract(module, tmp))
            symbols = subprocess.run(
                ["objdump", "-T", str(path)], check=True, capture_output=True, text=True
            ).stdout
            dynamic = subprocess.run(
                ["objdump", "-p", str(path)], check=True, capture_output=True, text=True
            ).stdout
            glibc = sorted({version(v) for v in re.findall(r"\bGLIBC_(\d+(?:\.\d+)+)\b", symbols)})
            needed_glibc += glibc
            newest = {}
            for line in symbols.splitlines():
                m = re.search(r"\bGLIBC_(\d+(?:\.\d+)+)\)?\s+(\S+)$", line)
                if m and glibc and version(m.group(1)) == glibc[-1]:
                    newest[m.group(2)] = m.group(1)
            libs = re.findall(r"^\s*NEEDED\s+(\S+)$", dynamic, re.M)
            print(f"{module}: {len(symbols.splitlines())} lines of dynamic symbols")
            print(f"  glibc versions needed: {', '.join('.'.join(map(str, v)) for v in glibc)}")
            if glibc:
                print(f"  the newest, GLIBC_{'.'.join(map(str, glibc[-1]))}, for: {', '.join(sorted(newest))}")
            print(f"  libraries needed: {', '.join(libs)}")
            for lib in libs:
                if lib.startswith("libpython"):
                    failures.append(f"{module} links {lib} (an abi3 module must not)")
                elif not ALLOWED_LIBS.match(lib):
                    failures.append(f"{module} needs {lib}, outside the manylinux policy")
    floor = max(needed_glibc) if needed_glibc else (2, 0)
    floor_text = ".".join(map(str, floor))
    if tag_floor is not None:
        tag_text = f"{tag_floor[0]}.{tag_floor[1]}"
        if floor[:2] > tag_floor:
            failures.append(f"the module needs glibc {floor_text} but the tag promises {tag_text}")
        print(f"{wheel.name}: needs glibc {floor_text}; tagged for glibc {tag_text} and later")
    for f in failures:
        print(f"check-wheel: {f}", file=sys.stderr)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
