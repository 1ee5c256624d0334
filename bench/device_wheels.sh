#!/usr/bin/env bash
# Builds .whl/: the wheels tiletune needs that the GPU machine lacks (z3-solver, libcst, platformdirs), for its
# CPython (DEVICE_PY, default 3.12).  Device calls carry .whl/ and bench/device_env.sh installs it there.
#
#     bash bench/device_wheels.sh
#
# A device call's upload (the tracked tree plus what it carries) is capped at 64 MiB, and z3-solver's wheel is
# 39 MB: it holds libz3 twice (libz3.so and libz3.so.<version>, the one z3's loader tries first) and the z3
# command-line program.  The copy in .whl/ keeps the versioned library alone (13 MB); `import z3` and its
# solver work from it.
set -euo pipefail
cd "$(dirname "$0")/.."
py=${DEVICE_PY:-3.12}
rm -rf .whl && mkdir .whl
python3 -m pip download -q --no-deps --only-binary=:all: -d .whl --python-version "$py" \
    --platform manylinux_2_28_x86_64 --platform manylinux_2_27_x86_64 --platform manylinux_2_17_x86_64 \
    --platform manylinux2014_x86_64 z3-solver libcst platformdirs
python3 - .whl/z3_solver-*.whl <<'PY'
"""Rewrite the z3-solver wheel without its unversioned libz3.so copy and its z3 program (RECORD to match)."""
import sys, zipfile
from pathlib import Path

path = Path(sys.argv[1])
with zipfile.ZipFile(path) as src:
    names = src.namelist()
    versioned = any(n.startswith("z3/lib/libz3.so.") for n in names)
    drop = {n for n in names if n.endswith("/data/bin/z3") or (versioned and n == "z3/lib/libz3.so")}
    items = [(info, src.read(info)) for info in src.infolist() if info.filename not in drop]
slim = path.with_suffix(".slim")
with zipfile.ZipFile(slim, "w", zipfile.ZIP_DEFLATED) as out:
    for info, data in items:
        if info.filename.endswith(".dist-info/RECORD"):
            lines = data.decode().splitlines(keepends=True)
            data = "".join(l for l in lines if l.split(",", 1)[0] not in drop).encode()
        out.writestr(info, data, compress_type=zipfile.ZIP_DEFLATED)
slim.replace(path)
print(f"{path.name}: dropped {sorted(drop)}")
PY
du -sh .whl/*
