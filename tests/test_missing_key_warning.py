"""A size the synthesis depends on but missing from ``key=`` is warned about by default, once per kernel."""

import warnings

import pytest

import fixtures
import tiletune
from tiletune.errors import TiletuneWarning


@pytest.fixture(autouse=True)
def _cache_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("TILETUNE_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("TILETUNE_VERBOSE", raising=False)


def _key_warnings(caught):
    return [w for w in caught if issubclass(w.category, TiletuneWarning) and "not in key=" in str(w.message)]


def test_missing_key_size_warns_once_per_kernel_without_verbose():
    mod = fixtures.load("vector_add")
    tuned = tiletune.autotune(configs=[], key=[], target="h100", top_k=2)(mod.KERNEL)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        mod.launch(tuned, mod.make_args({"n_elements": 1000}))
        mod.launch(tuned, mod.make_args({"n_elements": 4096}))
    found = _key_warnings(caught)
    assert len(found) == 1, [str(w.message) for w in caught]
    text = str(found[0].message)
    assert "add_kernel" in text or mod.KERNEL.__name__ in text
    assert "n_elements" in text and "key=['n_elements']" in text
    assert found[0].filename == __file__ or found[0].filename.endswith("vector_add.py")


def test_size_in_key_gives_no_warning():
    mod = fixtures.load("vector_add")
    tuned = tiletune.autotune(configs=[], key=["n_elements"], target="h100", top_k=2)(mod.KERNEL)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        mod.launch(tuned, mod.make_args({"n_elements": 1000}))
    assert not _key_warnings(caught)
