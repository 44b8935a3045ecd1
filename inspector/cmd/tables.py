"""Text tables for ``ironic-inspector-manage``: a header, a rule, one row
per item; lists are joined with ``; ``."""

from typing import Any


def table(rows: list[dict[str, Any]], columns: tuple[str, ...]) -> str:
    """``rows`` under ``columns``, each column as wide as its widest cell."""

    def text(value: Any) -> str:
        if value is None:
            return ""
        return "; ".join(value) if isinstance(value, list) else str(value)

    cells = [[text(r.get(c)) for c in columns] for r in rows]
    widths = [
        max(len(c), *(len(row[i]) for row in cells)) if cells else len(c)
        for i, c in enumerate(columns)
    ]
    line = "  ".join(c.ljust(w) for c, w in zip(columns, widths, strict=True))
    out = [line, "  ".join("-" * w for w in widths)]
    out += [
        "  ".join(v.ljust(w) for v, w in zip(row, widths, strict=True)) for row in cells
    ]
    return "\n".join(out)
