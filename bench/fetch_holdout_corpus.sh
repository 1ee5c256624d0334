#!/usr/bin/env bash
# Fetch the held-out library kernels of the cold bench (bench/cold_pairs.py, HOLDOUT_PAIRS with a library
# source) and unpack them under .corpus/ (or TILETUNE_CORPUS).  GPU bench data only: no test reads them, CI
# does not fetch them.  They are read by the analyser and re-hosted by the bench, never installed or imported
# as a package, and kept out of the cost model's development.
#   mamba-ssm 2.3.2.post1 (sdist): its setup.py builds CUDA extensions, so `pip download` cannot prepare it;
#   the sdist is taken from PyPI's JSON API and checked against the sha256 PyPI lists.
# Idempotent: a library already unpacked is kept.
set -euo pipefail
cd "$(dirname "$0")/.."
dest=${TILETUNE_CORPUS:-.corpus}
python3 - "$dest" mamba-ssm 2.3.2.post1 <<'PY'
import hashlib, io, json, sys, tarfile, urllib.request
from pathlib import Path

dest, name, version = Path(sys.argv[1]), sys.argv[2], sys.argv[3]
out = dest / name
if (out / ".done").exists():
    sys.exit(0)
meta = json.load(urllib.request.urlopen(f"https://pypi.org/pypi/{name}/json", timeout=60))
sdist = next(u for u in meta["releases"][version] if u["packagetype"] == "sdist")
data = urllib.request.urlopen(sdist["url"], timeout=120).read()
if hashlib.sha256(data).hexdigest() != sdist["digests"]["sha256"]:
    raise SystemExit(f"fetch_holdout_corpus: {sdist['filename']}: sha256 differs from PyPI's")
out.mkdir(parents=True, exist_ok=True)
with tarfile.open(fileobj=io.BytesIO(data), mode="r:gz") as tar:
    tar.extractall(out, filter="data")
(out / ".done").touch()
print(f"fetch_holdout_corpus: {sdist['filename']} unpacked in {out}")
PY
