"""The entry point shared by the rank scripts in this folder.

``run_rank(scenarios)`` reads ``SCENARIO RANK WORLD INIT_FILE OUT_DIR`` from
argv, joins the gloo group through ``file://INIT_FILE``, runs the scenario and
writes ``OUT_DIR/rank<RANK>.json``.  An exception is recorded there
(``{"error", "message", "traceback"}``) and the process still exits 0, so a
test can assert on every rank's outcome.
"""

from __future__ import annotations

import json
import os
import sys
import traceback
from pathlib import Path
from typing import Any, Callable, Mapping

import torch.distributed as dist


def run_rank(scenarios: Mapping[str, Callable[[Any], dict]]) -> None:
    """Run one rank of ``scenarios[argv[1]]`` and exit without interpreter finalisation."""
    scenario, rank, world = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    init_file, out_dir = sys.argv[4], sys.argv[5]
    dist.init_process_group("gloo", init_method=f"file://{init_file}", rank=rank, world_size=world)
    pg = dist.group.WORLD
    try:
        out = scenarios[scenario](pg)
    except Exception as exc:
        out = {"error": type(exc).__name__, "message": str(exc), "traceback": traceback.format_exc()}
    Path(out_dir, f"rank{rank}.json").write_text(json.dumps(out, indent=1))
    dist.destroy_process_group()
    # Skip interpreter finalisation: with torch 2.13's gloo it sometimes aborts at exit
    # ("terminate called without an active exception", no Python frame) after all work is done.
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)
