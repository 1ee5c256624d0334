"""An autotuner in disguise: configs read from a data file per chip."""
import json
import os

import triton


def _configs():
    path = os.path.join(os.path.dirname(__file__), "configs.json")
    if not os.path.exists(path):
        return [triton.Config({})]
    with open(path) as f:
        return [triton.Config(c) for c in json.load(f)]


def tuned_from_table(key):
    """``@tuned_from_table(key)``: ``triton.autotune`` over the table's configs."""
    return triton.autotune(configs=_configs(), key=key)
