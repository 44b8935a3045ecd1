"""The installed version of this package."""

import functools
from importlib import metadata

DISTRIBUTION = "ironic-inspector-ng"


@functools.cache
def string() -> str:
    try:
        return metadata.version(DISTRIBUTION)
    except metadata.PackageNotFoundError:
        return "unknown"
