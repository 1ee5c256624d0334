"""The constraint model: what a tiling must satisfy to fit a target, as Z3 and as arrays.

Each :class:`Constraint` is one predicate over the search variables, with a
tracking name (unique within its model), a sentence in words and (for
capacities) the needed and the available amount.  The same predicate object is

* turned into Z3 (``assert_and_track`` under its name) by :meth:`Model.solver`,
  for unsatisfiable cores and for checking single points, and
* evaluated over NumPy arrays of candidate points by :mod:`..enumerate`, which
  enumerates the finite space completely.

So the enumeration and the Z3 model cannot disagree: they read one list.

Modules, one job each:

* :mod:`.preds`: terms and predicates (NumPy evaluation, Z3, text);
* :mod:`.conditions`: ``tl.static_assert`` conditions parsed with :mod:`ast`;
* :mod:`.core`: :class:`Constraint`, :class:`Model` and the cost terms;
* :mod:`.build`: :func:`build_model`, the rules every target shares;
* :mod:`.nvidia`, :mod:`.ascend`: one module per target family for its rules
  (capacity, alignment, matrix units);
* :mod:`.programs`: program counts and trip counts.
"""

from .build import build_model
from .conditions import parse_condition
from .core import AccessTerm, Constraint, DotTerm, Model
from .preds import Pred, Term, evaluate, evaluate_pred, pred_str, pred_to_z3, term_str
from .programs import program_axes

__all__ = [
    "Term",
    "Pred",
    "Constraint",
    "Model",
    "AccessTerm",
    "DotTerm",
    "build_model",
    "evaluate",
    "evaluate_pred",
    "pred_to_z3",
    "parse_condition",
    "pred_str",
    "term_str",
    "program_axes",
]
