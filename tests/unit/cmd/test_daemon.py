"""The daemons' one start-up path: parts start in order, stop in reverse."""

from collections.abc import Mapping

import pytest

from inspector import exceptions
from inspector.cmd import daemon


class Part:
    def __init__(
        self,
        name: str,
        log: list[str],
        fails: bool = False,
        unfinished: Mapping[str, str] | None = None,
    ) -> None:
        self.name, self.log, self.fails, self.unfinished = name, log, fails, unfinished

    def start(self) -> None:
        self.log.append(f"start {self.name}")
        if self.fails:
            raise exceptions.ConfigError(f"{self.name} cannot listen")

    def stop(self) -> Mapping[str, str] | None:
        self.log.append(f"stop {self.name}")
        return self.unfinished


def test_parts_start_in_order_and_stop_in_reverse() -> None:
    log: list[str] = []
    parts = [Part("service", log, unfinished={"u1": "process"}), Part("server", log)]
    assert daemon.start_all(parts) == parts
    assert daemon.stop_all(parts) == {"u1": "process"}
    assert log == ["start service", "start server", "stop server", "stop service"]


def test_a_part_that_cannot_start_stops_those_started() -> None:
    log: list[str] = []
    parts = [Part("service", log), Part("server", log, fails=True), Part("x", log)]
    with pytest.raises(exceptions.ConfigError, match="server cannot listen"):
        daemon.start_all(parts)
    assert log == ["start service", "start server", "stop service"]


@pytest.mark.parametrize("standalone", [True, False])
def test_the_wrong_shape_is_refused_naming_the_other_scripts(standalone: bool) -> None:
    message = daemon.WRONG_SHAPE[standalone]
    assert f"standalone is {not standalone}" in message
    assert f"set standalone = {standalone}" in message
