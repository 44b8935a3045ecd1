"""The one wait helper of the lab and the tests."""

import itertools

import pytest

from lab.waiting import NotInTime, wait_until


def test_returns_the_first_value_that_holds() -> None:
    counter = itertools.count()
    assert wait_until(lambda: next(counter), 5, "a true count", interval=0) == 1
    values = iter([{"state": "starting"}, {"state": "waiting"}])
    assert wait_until(
        lambda: next(values),
        5,
        "waiting",
        until=lambda body: body["state"] == "waiting",
        interval=0,
    ) == {"state": "waiting"}


def test_failure_names_what_and_the_last_value_seen() -> None:
    with pytest.raises(NotInTime) as caught:
        wait_until(
            lambda: {"state": "starting"},
            0,
            "node u1 to reach waiting",
            until=lambda body: body["state"] == "waiting",
        )
    assert str(caught.value) == (
        "Waited 0 s for node u1 to reach waiting; last seen: {'state': 'starting'}"
    )
    # a failed test to pytest, a timeout to the lab's callers
    assert isinstance(caught.value, AssertionError)
    assert isinstance(caught.value, TimeoutError)


def test_ignored_exceptions_are_not_yet_and_others_propagate() -> None:
    answers: list[Exception | str] = [ConnectionRefusedError("refused"), "up"]

    def poll() -> str:
        answer = answers.pop(0)
        if isinstance(answer, Exception):
            raise answer
        return answer

    assert wait_until(poll, 5, "the server", interval=0, ignoring=OSError) == "up"
    with pytest.raises(NotInTime, match=r"last seen: ConnectionRefusedError"):
        wait_until(
            lambda: (_ for _ in ()).throw(ConnectionRefusedError("refused")),
            0,
            "the server",
            ignoring=OSError,
        )
    empty: dict[str, int] = {}
    with pytest.raises(KeyError):
        wait_until(lambda: empty["missing"], 5, "a key", ignoring=OSError)


def test_a_long_last_value_is_cut() -> None:
    with pytest.raises(NotInTime) as caught:
        wait_until(lambda: "x" * 5000, 0, "short", until=lambda _v: False)
    assert len(str(caught.value)) < 2100
    assert str(caught.value).endswith("...")
