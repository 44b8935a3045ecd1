"""The log and error messages the guides quote are the ones the code prints.

doc/split-mode.md, doc/operations.md and doc/troubleshooting.md quote what
an operator sees in double quotes, with "..." for the parts that vary and
example values (X, c1, 12 s) where the code fills in a field. Each quote of
three words or more must be one the code can print, read from the
package's string literals (log templates, f-strings, exception messages,
and the outage lines ``outages.OutageLog`` composes from what a duty is):
a template matches the quote whole, or its start when the quote gives
only the start of a long message, its fields (``%s``, ``{...}``) standing
for any text. A "..." stands for a field, or the end of one: text after it
within one field is a paraphrase ("...; no conductor can lead meanwhile"
where the code prints "...; it does not lead until the database answers
(no conductor can lead meanwhile)"). A quote that does not start with a
capital letter, or starts with "...", is part of a longer message: a
template must contain it.
"""

import ast
import functools
import pathlib
import re

ROOT = pathlib.Path(__file__).resolve().parents[2]
GUIDES = ("split-mode.md", "operations.md", "troubleshooting.md")

FIELD = re.compile(r"%(?:\([^)]*\))?[-+ #0]*\d*(?:\.\d+)?[sdfrx]|\{[^{}]*\}")
ELIDED = "\x01"
"""A quote's "..." stands for a field of the code, never for its fixed text."""
QUOTE = re.compile(r'"([^"\n]+(?:\n[^"\n]+)*)"')
LIBRARY_MESSAGES = {
    "Failed to find some config files: /path": "oslo.config",
}
"""Quotes of what a library prints, by the library."""
CODE_BLOCK = re.compile(r"```.*?```", re.S)


def _text(node: ast.AST) -> str | None:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.JoinedStr):
        return "".join(
            str(v.value) if isinstance(v, ast.Constant) else "{}" for v in node.values
        )
    return None


def _flat(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip()


@functools.cache
def templates() -> tuple[str, ...]:
    """Every string of two words or more the package writes, plus the
    outage lines composed from each OutageLog's ``what``."""
    found: set[str] = set()
    whats: list[str] = []
    outage_lines: list[str] = []
    for path in (ROOT / "inspector").rglob("*.py"):
        tree = ast.parse(path.read_text())
        for node in ast.walk(tree):
            text = _text(node)
            if text is not None and len(text.split()) >= 2:
                found.add(_flat(text))
                if path.name == "outages.py" and text.startswith("%s "):
                    outage_lines.append(text[2:])
            if isinstance(node, ast.Call) and len(node.args) >= 2:
                name = getattr(node.func, "id", getattr(node.func, "attr", ""))
                what = _text(node.args[1]) if name == "OutageLog" else None
                if what:
                    whats.append(what)
    found |= {_flat(what + line) for what in whats for line in outage_lines}
    return tuple(sorted(found))


MAX_TOKENS = 80
"""Quotes are shorter: a template's words past these are not matched (and
Python's regular expressions nest no deeper)."""
FIELD_MATCH = f"(?:[^{ELIDED}]*{ELIDED}|[^{ELIDED}]+)"
"""What a field of the code may stand for in a quote: an example value, or
text ending in an elision. A quote's fixed text never follows its "..."
within one field, and a quote cut short ends on the code's fixed text or
on an elision."""
ELIDED_END = f"[^{ELIDED}]*{ELIDED}\\Z"


def _tokens(template: str) -> tuple[str, ...]:
    """``template`` as patterns of its words, each field joined to the word
    after it (a quote cut short never ends on a field cut short, but may
    end in an elision within one: "... to ...")."""
    tokens: list[str] = []
    for index, piece in enumerate(FIELD.split(template)):
        words = [
            re.escape(word) for word in re.findall(r"\s*(?:\w+|[^\w\s])|\s+", piece)
        ]
        if index:
            follows = FIELD_MATCH + (words[0] if words else "")
            words = [f"(?:{ELIDED_END}|{follows})", *words[1:]]
        tokens += words
    return tuple(tokens)


@functools.cache
def _nested(tokens: tuple[str, ...]) -> re.Pattern[str]:
    """The tokens whole or cut short after any of them."""
    pattern = ""
    for token in reversed(tokens[:MAX_TOKENS]):
        pattern = f"{token}(?:{pattern})?" if pattern else token
    return re.compile(pattern, re.S)


@functools.cache
def _worded() -> tuple[tuple[str, tuple[str, ...]], ...]:
    return tuple(
        (t, _tokens(t))
        for t in templates()
        if len(re.findall(r"[A-Za-z]{2,}", FIELD.sub(" ", t))) >= 2
    )


@functools.cache
def _token(token: str) -> re.Pattern[str]:
    return re.compile(token, re.S)


def quotes(guide: str) -> list[str]:
    text = CODE_BLOCK.sub("", (ROOT / "doc" / guide).read_text())
    return [q for q in map(_flat, QUOTE.findall(text)) if len(q.split()) >= 3]


def problems(quote: str) -> list[str]:
    """Why ``quote`` is not a message of the code (empty when it is)."""
    marked = quote.replace("...", ELIDED)
    if quote[:1].isupper():
        # a template whose first token does not match cannot match whole
        if any(
            _nested(tokens).fullmatch(marked)
            for _, tokens in _worded()
            if _token(tokens[0]).match(marked)
        ):
            return []
    else:
        # part of a longer message: it may start at any word of a template
        # that has the quote's first or longest word
        words = re.findall(r"[A-Za-z_]{4,}", quote)
        words = [words[0], max(words, key=len)]
        for template, tokens in _worded():
            # a start whose first token does not match cannot match whole
            if any(w in template for w in words) and any(
                _nested(tokens[i:]).fullmatch(marked)
                for i in range(len(tokens))
                if _token(tokens[i]).match(marked)
            ):
                return []
    return ["no message of the code matches it"]


def test_the_guides_quote_messages() -> None:
    for guide in GUIDES:
        assert len(quotes(guide)) >= 5, guide


def test_every_quoted_message_is_one_the_code_prints() -> None:
    wrong = [
        f"doc/{guide}: {quote!r}: {'; '.join(found)}"
        for guide in GUIDES
        for quote in quotes(guide)
        if quote not in LIBRARY_MESSAGES and (found := problems(quote))
    ]
    assert not wrong, "quoted in the guides, printed by no code:\n" + "\n".join(wrong)


def test_a_paraphrase_is_caught() -> None:
    assert problems(
        "Cannot renew the leader lease of ...: ...; no conductor can lead meanwhile"
    )
    assert problems("Node X changed while starting; dropping that work")
    assert not problems("Node X changed while starting; dropping this work")
    # part of a longer message, matched from within a template
    assert not problems("c1/... is now the leader (epoch 7)")
    assert problems("c1/... is now a leader (epoch 7)")
