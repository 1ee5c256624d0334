"""Check that a lint speed change leaves the lint's output byte-identical.

Usage: python bench/check_lint_identity.py [--ref DIR] [--libs a,b,...] [--no-lazy]

Two checks, over every library unpacked under ``.corpus/`` (``bash bench/fetch_corpus.sh``)
and ``fixtures/``:

* ``--ref DIR`` (a checkout of the code to compare with, e.g. ``git archive main | tar -x -C
  DIR``): ``tiletune lint PATH --no-cache --format json`` run once with this tree's code and
  once with DIR's, the same absolute paths, cwd and environment: stdout must be the same bytes.
* lazy bodies (always, unless ``--no-lazy``): every file with a kernel is linted as the CLI
  lints it (the rules choose which kernels' bodies are analysed, ``Rule.needs_body``) and again
  on the analysis of every kernel's body, in this process: the diagnostics must be equal.  This
  checks each rule's ``needs_body`` against its ``check`` on real files, whatever main says.

Prints one line per library and exits 1 on any difference (the first differing file is named).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _targets(libs: list[str] | None) -> list[Path]:
    corpus = ROOT / ".corpus"
    if libs:
        names = libs
    else:
        names = sorted(p.name for p in corpus.iterdir() if p.is_dir() and p.name != "dl") if corpus.is_dir() else []
    out = [corpus / n for n in names]
    return out + ([ROOT / "fixtures"] if not libs else [])


def _cli_output(tree: Path, path: Path) -> bytes:
    env = dict(os.environ, PYTHONPATH=str(tree), PYTHONHASHSEED="0")
    env.pop("TILETUNE_LINT_CACHE", None)
    cmd = [sys.executable, "-m", "tiletune.lint", "lint", str(path), "--no-cache", "--format", "json"]
    done = subprocess.run(cmd, capture_output=True, env=env, cwd=tree)  # cwd: `-m` imports from it first
    if done.returncode not in (0, 1):
        raise SystemExit(f"{tree}: tiletune lint {path} failed ({done.returncode}): {done.stderr[-2000:]!r}")
    return done.stdout


def _findings(output: bytes) -> int:
    import json

    data = json.loads(output or b"[]")
    return len(data) if isinstance(data, list) else len(data.get("diagnostics", data))


def check_against(ref: Path, path: Path) -> bool:
    """True when this tree's and ``ref``'s ``tiletune lint --format json`` print the same bytes for ``path``."""
    ours, theirs = _cli_output(ROOT, path), _cli_output(ref, path)
    same = ours == theirs
    print(f"  {path.name:<14} vs {ref}: {'identical' if same else 'DIFFERENT'} ({len(ours)} bytes, "
          f"{_findings(ours)} findings)", flush=True)
    return same


def check_lazy(path: Path) -> bool:
    """True when every file under ``path`` gets the same diagnostics with the lint's lazy bodies as with
    every kernel's body analysed."""
    sys.path.insert(0, str(ROOT))
    from tiletune.analysis import analyze_source
    from tiletune.lint.registry import analysis_failed, lint_source, might_have_kernels, read_python_source

    files = sorted(str(f) for f in path.rglob("*.py"))
    found = 0
    for f in files:
        try:
            source = read_python_source(f)
        except Exception:  # noqa: BLE001 - unreadable: the CLI reports TT000 without analysing
            continue
        if not might_have_kernels(source):
            continue
        lazy = lint_source(source, f, project=True)
        try:
            full = lint_source(source, f, project=True, module=analyze_source(source, file=f))
        except Exception as exc:  # noqa: BLE001 - the lint reports a rejected file as TT000
            full = [analysis_failed(f, exc)]
        if lazy != full:
            print(f"  {path.name:<14} lazy bodies: DIFFERENT at {f}:\n    lazy {lazy}\n    full {full}")
            return False
        found += len(lazy)
    print(f"  {path.name:<14} lazy bodies: identical ({len(files)} files, {found} findings)", flush=True)
    return True


def main() -> int:
    """Run the checks; exit status 1 on any difference."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--ref", type=Path, default=None, help="a checkout of the code to compare the CLI output with")
    ap.add_argument("--libs", default=None, help="comma-separated names under .corpus/ (default: all, and fixtures/)")
    ap.add_argument("--no-lazy", action="store_true", help="skip the lazy-bodies check")
    args = ap.parse_args()
    targets = _targets(args.libs.split(",") if args.libs else None)
    if not targets:
        raise SystemExit("no corpus: run bash bench/fetch_corpus.sh")
    ok = True
    for path in targets:
        if args.ref is not None:
            ok &= check_against(args.ref.resolve(), path)
        if not args.no_lazy:
            ok &= check_lazy(path)
    print("identical" if ok else "DIFFERENT")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
