"""The start step: learn the node's hardware the way the run's mode asks
(:mod:`inspector.conductor.inspect`), and record the answer: ``waiting``
for the ramdisk, or the data posted, which makes processing the next step
(the work queue claims it and runs it under the same lock)."""

from collections.abc import Callable

from inspector.conductor.inspect import Inspect
from inspector.db import transitions
from inspector.db.introspections import IntrospectionRecord
from inspector.runtime import Runtime


def run(
    rt: Runtime,
    inspect_for: Callable[[IntrospectionRecord], Inspect],
    record: IntrospectionRecord,
) -> IntrospectionRecord | None:
    """The start step of ``record``; the processing step it makes, if any."""
    answer = inspect_for(record).inspect(record)
    if answer.data is None:
        transitions.waiting(rt.db, record, answer.bmc_data)
        return None
    waiting = transitions.waiting(rt.db, record)
    # a conductor lost from here on leaves a processing step the sweep
    # resumes from the stored data
    return transitions.posted(rt.db, waiting, answer.data, out_of_band=True)
