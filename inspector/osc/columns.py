"""Values of OpenStackClient's tables: lists and objects as JSON text in a
table, as themselves with ``-f json|yaml``. Loaded only by OpenStackClient."""

import json
from typing import Any

from cliff import columns


class JSONColumn(columns.FormattableColumn[Any]):
    """A list or an object: one line of JSON for people, the value itself
    for scripts."""

    def human_readable(self) -> str:
        return json.dumps(self._value, sort_keys=True)

    def machine_readable(self) -> Any:
        return self._value


def value(item: Any) -> Any:
    """``item`` ready for a row: lists and objects wrapped in a
    :class:`JSONColumn`, the rest as it is."""
    if isinstance(item, dict | list):
        return JSONColumn(item)
    return item
