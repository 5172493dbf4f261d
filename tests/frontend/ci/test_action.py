"""The GitHub Action (issue 37, item 6): action.yml's steps, run as GitHub's runner runs
them (bash, the inputs substituted, a fake GITHUB_* environment), install gradcheck from
the action's own checkout and verify with the given args, writing annotations, the job
summary and the exit-code output."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.installed import ROOT

yaml = pytest.importorskip("yaml", reason="PyYAML is not installed (pre-commit brings it)")

OPS = """import gradcheck as mg

class Cube(mg.Operation):
    def __call__(self, x):
        self.variables = (x,)
        return x.data ** 3

    def backward_var(self, grad, index, **kwargs):
        return grad * {factor} * self.variables[0].data ** 2
"""


def action() -> dict:
    return yaml.safe_load((ROOT / "action.yml").read_text())


def substituted(text: str, inputs: dict[str, str], action_path: Path = ROOT) -> str:
    # GitHub's expressions that the steps use: the inputs and the action's path
    def value(match: re.Match[str]) -> str:
        name = match.group(1).strip()
        if name == "github.action_path":
            return str(action_path)
        assert name.startswith("inputs."), name
        return inputs[name.removeprefix("inputs.")]

    return re.sub(r"\$\{\{(.*?)\}\}", value, text)


def run_action(
    workspace: Path, python: tuple[str, Path], **given: str
) -> tuple[int, dict[str, str], str]:
    """Run every step as the runner would; the exit status of the first failing step
    (or 0), the outputs the steps wrote, and everything they printed."""
    spec = action()
    inputs = {name: str(i.get("default", "")) for name, i in spec["inputs"].items()}
    interpreter, action_path = python
    inputs.update(python=interpreter, **given)
    github = workspace / "_github"
    github.mkdir(exist_ok=True)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GITHUB_", "PYTEST_"))}
    env.update(
        GITHUB_ACTIONS="true",
        GITHUB_ACTION_PATH=str(action_path),
        GITHUB_WORKSPACE=str(workspace),
        GITHUB_STEP_SUMMARY=str(github / "summary.md"),
        GITHUB_OUTPUT=str(github / "output"),
        PIP_NO_DEPS="1",  # the dependencies are those of this environment (base.pth)
    )
    printed = []
    for step in spec["runs"]["steps"]:
        assert step["shell"] == "bash"
        step_env = {
            **env,
            **{k: substituted(str(v), inputs, action_path) for k, v in step["env"].items()},
        }
        cwd = workspace / substituted(step.get("working-directory", "."), inputs, action_path)
        script = github / "step.sh"
        script.write_text(substituted(step["run"], inputs, action_path))
        out = subprocess.run(
            ["bash", "--noprofile", "--norc", "-eo", "pipefail", str(script)],
            cwd=cwd,
            env=step_env,
            capture_output=True,
            text=True,
            timeout=600,
        )
        printed.append(out.stdout + out.stderr)
        if out.returncode != 0:
            break
    lines = (github / "output").read_text().splitlines() if (github / "output").exists() else []
    outputs = dict(line.split("=", 1) for line in lines)
    return out.returncode, outputs, "\n".join(printed)


@pytest.fixture(scope="module")
def python(tmp_path_factory) -> tuple[str, Path]:
    """A fresh venv that sees this environment's packages but not its gradcheck (the
    action's install step puts gradcheck there), and the action's checkout: a copy of
    this one's files, as GitHub checks out the action's repository (pip builds in it)."""
    folder = tmp_path_factory.mktemp("action")
    checkout = folder / "action"
    shutil.copytree(
        ROOT,
        checkout,
        ignore=shutil.ignore_patterns(
            ".git", ".venv", ".*_cache", "build", "dist", "*.egg-info", "__pycache__"
        ),
    )
    venv = folder / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    site = next((venv / "lib").glob("python3*/site-packages"))
    (site / "base.pth").write_text(
        "\n".join(p for p in sys.path if p.endswith("site-packages")) + "\n"
    )
    return str(venv / "bin" / "python"), checkout


def test_the_action_is_composite_and_its_output_is_the_verify_steps():
    spec = action()
    assert spec["runs"]["using"] == "composite"
    assert set(spec["inputs"]) >= {"args"}
    assert spec["outputs"]["exit-code"]["value"] == "${{ steps.verify.outputs.exit-code }}"
    assert not any("upload" in str(step.get("uses", "")) for step in spec["runs"]["steps"])


def test_the_steps_install_from_the_action_path_and_verify(tmp_path, python):
    project = tmp_path / "project"
    (project / "sub").mkdir(parents=True)
    (project / "sub" / "cube_ops.py").write_text(OPS.format(factor=2))  # wrong: 3x²
    args = "cube_ops:Cube --max-examples 5 --seed 1 --domain '0.5:2'"
    status, outputs, printed = run_action(
        project, python, args=args, **{"working-directory": "sub"}
    )
    assert status == 1, printed
    assert outputs == {"exit-code": "1"}
    where = subprocess.run(
        [python[0], "-c", "import gradcheck; print(gradcheck.__file__)"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert str(ROOT) not in where and "site-packages" in where  # installed, not this tree
    assert "::error file=cube_ops.py,line=3,title=gradcheck%3A cube_ops%3ACube failed::" in printed
    summary = (project / "_github" / "summary.md").read_text()
    assert "| `cube_ops:Cube` | ❌ failed |" in summary
    assert "gradcheck verify cube_ops:Cube --domain 0.5:2 --max-examples 5 --seed 1" in summary

    (project / "sub" / "cube_ops.py").write_text(OPS.format(factor=3))
    status, outputs, printed = run_action(
        project, python, args=args, **{"working-directory": "sub"}
    )
    assert status == 0, printed
    assert outputs == {"exit-code": "0"}
    assert "::error" not in printed
