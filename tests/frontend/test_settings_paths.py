"""Every way to ask for a check takes the same settings (issue 34): ``check``'s and
``verify``'s keywords are the one list (read off their signatures), and the command
line, ``describe``, the configuration file, its schema and the pytest marker each take
every one that applies to them. The marker and the fixtures are run in
tests/pytest_plugin/test_pytest_plugin.py (``test_every_setting_reaches_the_fixtures``)."""

from __future__ import annotations

import inspect
from dataclasses import fields

import numpy as np

import gradcheck
import gradcheck.schemas
from gradcheck.checking.checker import CHECK_SETTINGS, check
from gradcheck.frontend.config import OPTION_KEYS, RUN_LIMITS
from gradcheck.frontend.options import FLAGS as _FLAGS
from gradcheck.frontend.options import SETTING_OF_OPTION as _SETTING_OF_OPTION
from gradcheck.pytest_plugin import marker_keys
from gradcheck.search.description import Description
from gradcheck.search.verifier import DEFAULTS, VERIFY_SETTINGS, verify

#: Settings that are a run's, not an op's: describe() does not take them.
RUN_SETTINGS = {"seed"}


def test_the_two_lists_are_the_functions_keywords():
    check_keywords = [
        n for n, p in inspect.signature(check).parameters.items() if p.kind is p.KEYWORD_ONLY
    ]
    assert set(CHECK_SETTINGS) == set(check_keywords) - {"params"}
    verify_keywords = [
        n for n, p in inspect.signature(verify).parameters.items() if p.kind is p.KEYWORD_ONLY
    ]
    assert set(VERIFY_SETTINGS) == set(verify_keywords) - {"name", "progress", "on_example"}
    # order, mode, tolerances...: every setting of a check can be asked of a search
    assert {"order", "modes", "mode", "atol", "rtol", "dtype", "seed"} <= set(VERIFY_SETTINGS)


def test_describe_takes_every_setting_of_an_op():
    described = {f.name for f in fields(Description)}
    assert described == set(VERIFY_SETTINGS) - RUN_SETTINGS
    keywords = set(inspect.signature(gradcheck.describe).parameters)
    assert set(VERIFY_SETTINGS) - RUN_SETTINGS <= keywords


def test_the_command_line_has_a_flag_for_every_setting():
    given = {_SETTING_OF_OPTION.get(option, option) for option in _FLAGS} | {"seed"}
    assert given == set(VERIFY_SETTINGS) | set(RUN_LIMITS)


def test_the_configuration_file_takes_every_setting():
    assert set(OPTION_KEYS) == {k.replace("_", "-") for k in (*VERIFY_SETTINGS, *RUN_LIMITS)}
    schema = gradcheck.schemas.load("config")["$defs"]["options"]["properties"]
    assert set(schema) == set(OPTION_KEYS)


def test_the_marker_takes_every_setting_of_check_and_verify():
    assert set(marker_keys()) == set(CHECK_SETTINGS) | set(VERIFY_SETTINGS)
    assert {"order", "modes", "shapes", "reference", "directions"} <= set(marker_keys())


def test_defaults_and_recorded_settings_are_settings():
    assert set(DEFAULTS) <= set(VERIFY_SETTINGS)
    result = check(lambda x: x * x, np.array([1.0, 2.0]))
    assert set(result.settings) <= set(CHECK_SETTINGS)
