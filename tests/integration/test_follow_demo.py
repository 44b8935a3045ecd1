"""``python -m lab demo --follow`` (lab/demos/following.py) in small: its
own Ironic inspecting three machines by itself, the inspector following
it, two of them repaired and inspected again; the demo's own checks pass
and it prints what an operator reads."""

import pathlib

import pytest

from lab.demos import following
from lab.demos.stage import DemoOptions


def test_follow_demo_in_small(
    tmp_path: pathlib.Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = following.run(DemoOptions(machines=3, seed=47, work_dir=tmp_path))

    out = capsys.readouterr().out
    assert code == 0, out
    assert out.count("ironic (agent)") == 3, out
    assert "removed  disk:" in out and "added    disk:" in out, out
    assert "ironic_inspector_ironic_follow_nodes 3.0" in out, out
