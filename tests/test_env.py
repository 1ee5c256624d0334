"""Boolean environment switches are read one way everywhere (tiletune.runtime.env)."""

import pytest

from tiletune.runtime.env import env_off, env_on, env_word


@pytest.mark.parametrize("value, on, off", [
    ("1", True, False), (" TRUE ", True, False), ("yes", True, False), ("On", True, False),
    ("0", False, True), ("false", False, True), (" No", False, True), ("OFF", False, True),
    ("", False, False), ("maybe", False, False), ("strict", False, False),
])
def test_a_switch_is_on_off_or_neither(monkeypatch, value, on, off):
    monkeypatch.setenv("TILETUNE_TEST_SWITCH", value)
    assert env_on("TILETUNE_TEST_SWITCH") is on and env_off("TILETUNE_TEST_SWITCH") is off


def test_any_of_several_names_and_unset(monkeypatch):
    monkeypatch.delenv("TILETUNE_TEST_A", raising=False)
    monkeypatch.setenv("TILETUNE_TEST_B", "1")
    assert env_on("TILETUNE_TEST_A", "TILETUNE_TEST_B") and not env_on("TILETUNE_TEST_A")
    assert env_word("TILETUNE_TEST_A") == "" and not env_off("TILETUNE_TEST_A")


def test_the_runtime_switches_read_it(monkeypatch):
    from tiletune.runtime.cache import always_tune, strict_version_check
    from tiletune.runtime.compile_workers import processes_enabled
    from tiletune.runtime.parallel_compile import parallel_enabled

    monkeypatch.setenv("TRITON_DIST_AUTOTUNE_ALWAYS_TUNE", "Yes")
    monkeypatch.setenv("TILETUNE_VERSION_CHECK", "strict")
    monkeypatch.setenv("TRITON_AUTOTUNE_PARALLEL_COMPILE", "off")
    monkeypatch.setenv("TILETUNE_COMPILE_PROCESSES", "no")
    assert always_tune() and strict_version_check() and not parallel_enabled() and not processes_enabled()
