"""ramdisk_error: fail the introspection when the ramdisk reports an error."""

from inspector import exceptions
from inspector.hooks.base import Data, ProcessingHook


class RamdiskErrorHook(ProcessingHook):
    """Reads ``error``; writes nothing."""

    def before_processing(self, data: Data) -> None:
        error = data.get("error")
        if error:
            raise exceptions.ProcessingError(f"Ramdisk reported error: {error}")
