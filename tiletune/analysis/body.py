"""Kernel body analysis: shapes, dtypes, roles, dataflow graph, footprint.

(Placeholder until the body analysis lands: leaves the spec as the front end built it.)
"""

from __future__ import annotations

from typing import Mapping

import libcst as cst

from .model import KernelSpec


def analyze_body(func: cst.FunctionDef, spec: KernelSpec, positions: Mapping, module_constants: Mapping[str, int]) -> None:
    """Fill ``spec`` from the body of ``func`` (see the module docstring)."""
    return None
