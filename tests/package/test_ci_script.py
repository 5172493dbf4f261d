"""`.ci/run` proves the README on a fresh machine (issue 37, item 1): its first step is
the README's test command verbatim, in a fresh venv, with nothing installed before it."""

from __future__ import annotations

import re

from tests.support.installed import ROOT


def test_step_1_is_the_readme_test_command_in_a_fresh_venv():
    readme = (ROOT / "README.md").read_text()
    (command,) = re.findall(r"^(pip install -e '\.\[test\]' && pytest)\s+#", readme, re.M)
    script = (ROOT / ".ci" / "run").read_text()
    step1, step2 = script.split('echo "::group::step 2', 1)
    assert f'bash -c "{command}"' in step1
    assert "python3 -m venv .venv" in step1
    # nothing installed and no CI variable before it: env -i with the network's only
    before = step1.split(f'bash -c "{command}"')[0].split('echo "::group::step 1')[1]
    assert "pip install" not in before and "env -i" in before
    # step 2 installs the optional frameworks and reruns what skipped in step 1
    for name in ("mygrad", "matplotlib", "jax", "torch-", "chromium", "pre-commit"):
        assert name in step2
