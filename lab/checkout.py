"""The checkout the lab runs from: the shipped files it uses as they are,
and the import path its own child processes need. Standard library only."""

import pathlib

ROOT = pathlib.Path(__file__).resolve().parents[1]
"""The checkout's top directory (``lab/``, ``inspector/``, ``etc/`` inside)."""
