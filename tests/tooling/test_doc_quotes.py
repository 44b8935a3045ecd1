"""What the guides quote of the code is what the code has: the API's
newest version, the policy rules, the manage command's options."""

import pathlib
import re

from inspector.api import policies, versions

ROOT = pathlib.Path(__file__).resolve().parents[2]
NEWEST = versions.format_version(versions.MAXIMUM)


def _section(path: pathlib.Path, heading: str) -> str:
    """The text under ``heading`` up to the next heading of its level."""
    text = path.read_text()
    level = heading.split(" ", 1)[0]
    start = text.index(f"\n{heading}\n")
    end = text.find(f"\n{level} ", start + len(heading) + 2)
    return text[start : end if end != -1 else len(text)]


def _flat(text: str) -> str:
    return re.sub(r"\s+", " ", text)


def test_readme_quotes_the_newest_api_version() -> None:
    api = _flat(_section(ROOT / "README.md", "## API"))
    assert f"1.19-{NEWEST} of ours" in api
    assert f"no header means {NEWEST}" in api
    # no other version of ours is given as the newest
    assert re.findall(r"1\.19-(1\.\d+)", api) == [NEWEST]


def test_api_guide_quotes_the_newest_api_version() -> None:
    text = _flat(_section(ROOT / "doc" / "api.md", "## Versions"))
    assert f"No version header: {NEWEST} (the newest)" in text
    assert f"supported range is 1.0 to {NEWEST}" in text
    assert f"Maximum-Version: {NEWEST}" in text
