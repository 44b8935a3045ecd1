"""What setup.cfg allows of a library whose private fields a module reads."""

import configparser
import pathlib

from packaging.requirements import Requirement

SETUP_CFG = pathlib.Path(__file__).parents[2] / "setup.cfg"


def required(name: str) -> Requirement:
    """``name``'s line of setup.cfg's install_requires."""
    parser = configparser.ConfigParser()
    parser.read(SETUP_CFG)
    for line in parser["options"]["install_requires"].split("\n"):
        if line.strip() and Requirement(line.strip()).name == name:
            return Requirement(line.strip())
    raise AssertionError(f"{name} is not in setup.cfg's install_requires")
