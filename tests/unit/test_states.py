import pytest

from inspector import exceptions, states

# The reference table, row by row: (from, event) -> to.
TABLE = {
    ("starting", "wait"): "waiting",
    ("starting", "error"): "error",
    ("starting", "timeout"): "error",
    ("waiting", "start"): "starting",
    ("waiting", "process"): "processing",
    ("waiting", "timeout"): "error",
    ("waiting", "abort"): "aborting",
    ("processing", "finish"): "finished",
    ("processing", "error"): "error",
    ("processing", "timeout"): "error",
    ("finished", "start"): "starting",
    ("finished", "finish"): "finished",
    ("finished", "reapply"): "reapplying",
    ("error", "start"): "starting",
    ("error", "error"): "error",
    ("error", "abort"): "error",
    ("error", "reapply"): "reapplying",
    ("reapplying", "finish"): "finished",
    ("reapplying", "error"): "error",
    ("reapplying", "timeout"): "error",
    ("reapplying", "reapply"): "reapplying",
    ("enrolling", "process"): "processing",
    ("enrolling", "error"): "error",
    ("enrolling", "timeout"): "error",
    ("aborting", "timeout"): "error",
    ("aborting", "abort_end"): "error",
}
EVENTS = [
    "start",
    "wait",
    "process",
    "finish",
    "error",
    "timeout",
    "abort",
    "abort_end",
    "reapply",
]


@pytest.mark.parametrize("state", states.ALL)
@pytest.mark.parametrize("event", EVENTS)
def test_every_cell(state: str, event: str) -> None:
    expected = TABLE.get((state, event))
    if expected is None:
        assert not states.allows(state, event)
        with pytest.raises(exceptions.InvalidTransition) as err:
            states.next_state(state, event)
        assert "no defined transition" in str(err.value)
        assert err.value.code == 400
    else:
        assert states.next_state(state, event) == expected


def test_messages() -> None:
    assert states.ABORTED_MESSAGE == "Canceled by operator"
    assert states.TIMEOUT_MESSAGE == "Introspection timeout"
