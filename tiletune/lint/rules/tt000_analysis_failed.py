"""TT000: the file could not be analysed (reported by the registry itself)."""

from __future__ import annotations

from ..rule import ANALYSIS_FAILED, Invalid, Rule

__all__ = ["AnalysisFailed"]


class AnalysisFailed(Rule):
    """A pseudo-rule: :func:`tiletune.lint.registry.lint_source` reports it when
    the analysis rejects a file; registering it lets --select/--ignore and
    SARIF name it."""

    code = ANALYSIS_FAILED
    name = "analysis-failed"
    summary = "the file could not be analysed (syntax error or unsupported construct)"
    severity = "error"
    WHAT = "The analysis could not read this file, so no other rule ran on it."
    WHY = "A syntax error (or a construct the analysis does not follow) hides every other finding."
    INVALID = [
        Invalid(
            """
            import triton

            @triton.jit
            def broken_kernel(x_ptr, BLOCK: tl.constexpr)
                pass
            """
        )
    ]
    VALID = [
        """
        import triton
        import triton.language as tl


        @triton.jit
        def fixed_kernel(x_ptr, BLOCK: tl.constexpr):
            pass
        """
    ]

    def needs_body(self, module, kernel) -> bool:
        """Reported by the registry itself, from no analysis."""
        return False
