"""The lint rules, one module per rule (its documentation, VALID/INVALID
examples and safe quick fix together).  :data:`RULE_CLASSES` lists them;
:mod:`tiletune.lint.registry` instantiates them once."""

from __future__ import annotations

from ._kernel import is_autotuned, is_jitted
from .tt000_analysis_failed import AnalysisFailed
from .tt001_tiling_default import TilingDefault
from .tt002_fixed_at_launch import FixedAtLaunch
from .tt003_grid_ignores_meta import GridIgnoresMeta
from .tt004_decorator_order import DecoratorOrder
from .tt005_empty_configs_without_tiletune import EmptyConfigsWithoutTiletune
from .tt006_autotune_unknown_argument import AutotuneUnknownArgument
from .tt007_side_effects_without_restore import SideEffectsWithoutRestore
from .tt008_config_not_power_of_two import ConfigNotPowerOfTwo
from .tt009_config_does_not_fit import ConfigDoesNotFit
from .tt010_tile_carries_meaning import TileCarriesMeaning
from .tt011_stages_change_nothing import StagesChangeNothing

__all__ = ["RULE_CLASSES", "is_autotuned", "is_jitted"]

RULE_CLASSES = (
    AnalysisFailed,
    TilingDefault,
    FixedAtLaunch,
    GridIgnoresMeta,
    DecoratorOrder,
    EmptyConfigsWithoutTiletune,
    AutotuneUnknownArgument,
    SideEffectsWithoutRestore,
    ConfigNotPowerOfTwo,
    ConfigDoesNotFit,
    TileCarriesMeaning,
    StagesChangeNothing,
)
