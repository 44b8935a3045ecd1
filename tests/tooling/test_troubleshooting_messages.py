"""Every message doc/troubleshooting.md quotes is one the code produces.

The guide quotes what an operator sees, in bold: **"message".** For each
quote, a fixed part of it (two words or more, between its placeholders:
"...", node X, host names, paths) must appear in a test under tests/, where
a test makes the code produce it and asserts on it. A quote nobody tests is
listed, so the guide cannot drift from the code.
"""

import pathlib
import re

ROOT = pathlib.Path(__file__).resolve().parents[2]
GUIDE = ROOT / "doc" / "troubleshooting.md"

QUOTE = re.compile(r'\*\*[^*"]*"([^"]+)"', re.S)
PLACEHOLDER = re.compile(
    r"\.\.\.|\b[XYNF]\b|\bc\d\b|\bnode [XY]\b|/path|rabbit://\S+|"
    r"\[group\]option|\bN s\b|\(\.\.\.\)"
)


def _joined_literals(text: str) -> str:
    """Python source with adjacent string literals joined ("a " "b" and
    across lines), so a message split for line length is found whole."""
    text = re.sub(r"(['\"])\s*\n\s*f?(['\"])", "", text)
    text = re.sub(r"(['\"]) f?(['\"])", "", text)
    return re.sub(r"\s+", " ", text)


def _fragments(message: str) -> list[str]:
    flat = re.sub(r"\s+", " ", message)
    parts = [p.strip(" .,;:()'") for p in PLACEHOLDER.split(flat)]
    return [p for p in parts if len(p.split()) >= 2]


def quoted_messages() -> list[str]:
    return [re.sub(r"\s+", " ", m) for m in QUOTE.findall(GUIDE.read_text())]


def test_the_guide_quotes_messages() -> None:
    assert len(quoted_messages()) >= 15


def test_every_quoted_message_is_asserted_by_a_test() -> None:
    tests = " ".join(
        _joined_literals(path.read_text())
        for path in (ROOT / "tests").rglob("*.py")
        if path.name != pathlib.Path(__file__).name
    )
    untested = []
    for message in quoted_messages():
        fragments = _fragments(message)
        if not fragments or not any(f in tests for f in fragments):
            untested.append(f"{message!r} (fragments: {fragments})")
    assert not untested, "quoted in doc/troubleshooting.md, asserted by no test:\n" + (
        "\n".join(untested)
    )
