"""Analysis layer: Triton kernel source -> :class:`KernelSpec` (never runs user code).

Entry points: :func:`analyze_source`, :func:`analyze_file`, :func:`analyze_kernel`.
"""

from .expr import Expr, parse_expr
from .model import (
    AutotuneArgs,
    ConfigLiteral,
    Decorator,
    DotInfo,
    Footprint,
    KernelSpec,
    LaunchSite,
    MemoryAccess,
    ModuleSpec,
    Param,
    Role,
    Span,
)
from .frontend import analyze_file, analyze_kernel, analyze_source

__all__ = [
    "Expr",
    "parse_expr",
    "AutotuneArgs",
    "ConfigLiteral",
    "Decorator",
    "DotInfo",
    "Footprint",
    "KernelSpec",
    "LaunchSite",
    "MemoryAccess",
    "ModuleSpec",
    "Param",
    "Role",
    "Span",
    "analyze_file",
    "analyze_kernel",
    "analyze_source",
]
