"""scheduler: the properties Nova's scheduler needs (cpus, memory, disk, arch)."""

import logging
from typing import Any

from inspector import exceptions
from inspector.hooks.base import Data, NodeContext, ProcessingHook
from inspector.hooks.root_disk import GiB

LOG = logging.getLogger(__name__)

MiB = 1024**2


class SchedulerHook(ProcessingHook):
    """Reads ``inventory.cpu``, ``inventory.memory`` and ``root_disk``; writes
    ``cpus``, ``cpu_arch``, ``memory_mb``, ``local_gb`` into the data and the
    node's properties (existing ones only with overwrite_existing)."""

    dependencies = ("root_disk_selection",)

    def before_update(self, data: Data, ctx: NodeContext) -> None:
        inventory = data.get("inventory") or {}
        cpu = inventory.get("cpu") or {}
        memory = inventory.get("memory") or {}
        missing = []
        cpus = cpu.get("count")
        if not isinstance(cpus, int) or cpus <= 0:
            missing.append("cpu.count")
        arch = cpu.get("architecture")
        if not arch:
            missing.append("cpu.architecture")
        memory_mb = memory.get("physical_mb")
        if not isinstance(memory_mb, int) or memory_mb <= 0:
            total = memory.get("total")
            memory_mb = total // MiB if isinstance(total, int) and total > 0 else None
        if memory_mb is None:
            missing.append("memory.physical_mb")
        if missing:
            raise exceptions.ProcessingError(
                "The following required parameters are missing from the "
                f"inventory: {', '.join(missing)}"
            )
        local_gb = 0
        root_disk = data.get("root_disk")
        if isinstance(root_disk, dict) and isinstance(root_disk.get("size"), int):
            local_gb = root_disk["size"] // GiB
            if self.conf.processing.disk_partitioning_spacing:
                local_gb = max(local_gb - 1, 0)
        values: dict[str, Any] = {
            "cpus": cpus,
            "cpu_arch": arch,
            "memory_mb": memory_mb,
            "local_gb": local_gb,
        }
        data.update(values)
        overwrite = self.conf.processing.overwrite_existing
        for name, value in values.items():
            if overwrite or ctx.properties.get(name) in (None, "", 0):
                ctx.patch(f"/properties/{name}", value)
        LOG.info(
            "Node %s: cpus=%s cpu_arch=%s memory_mb=%s local_gb=%s",
            ctx.uuid,
            cpus,
            arch,
            memory_mb,
            local_gb,
        )
