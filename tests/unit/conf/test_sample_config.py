"""The committed sample configuration matches the options in the code."""

import pathlib
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[3]


@pytest.mark.parametrize(
    "generator,config,sample",
    [
        (
            "oslo-config-generator",
            "config-generator.conf",
            "inspector.conf.sample",
        ),
        (
            "oslopolicy-sample-generator",
            "policy-generator.conf",
            "policy.yaml.sample",
        ),
    ],
)
def test_sample_is_current(
    tmp_path: pathlib.Path, generator: str, config: str, sample: str
) -> None:
    etc = ROOT / "etc/ironic-inspector"
    out = tmp_path / sample
    subprocess.run(
        [
            str(pathlib.Path(sys.executable).parent / generator),
            "--config-file",
            str(etc / config),
            "--output-file",
            str(out),
        ],
        check=True,
        cwd=ROOT,
    )
    committed = (etc / sample).read_text()
    assert out.read_text() == committed, "run 'make genconfig' and commit the result"


def test_config_reference_is_current() -> None:
    from tools import config_reference as reference

    committed = (ROOT / "doc/config-reference.md").read_text()
    assert reference.render() == committed, "run 'make docs' and commit the result"
    for group in ("DEFAULT", "database", "coordination", "healthcheck", "metrics"):
        assert f"\n## [{group}]\n" in committed


def test_config_reference_check_flags_a_stale_file(tmp_path: pathlib.Path) -> None:
    from tools import config_reference as reference

    stale = tmp_path / "ref.md"
    stale.write_text("old\n")
    assert reference.main([str(stale), "--check"]) == 1
    assert reference.main([str(stale)]) == 0
    assert reference.main([str(stale), "--check"]) == 0


def test_a_default_made_at_run_time_is_described_not_quoted() -> None:
    """[DEFAULT]host defaults to the machine's name: the reference and the
    sample say so, not the name of the machine that generated them (nor
    localhost, which it is not)."""
    (row,) = [
        line
        for line in (ROOT / "doc/config-reference.md").read_text().splitlines()
        if line.startswith("| `host` |")
    ]
    assert "| `<the machine's host name>` |" in row
    sample = (ROOT / "etc/ironic-inspector/inspector.conf.sample").read_text()
    assert "\n#host = <the machine's host name>\n" in sample
