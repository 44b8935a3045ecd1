"""Loads the configured processing hooks and runs them in order."""

import logging
import time
from typing import Any

import stevedore
from oslo_config import cfg

from inspector import exceptions
from inspector.hooks.base import Data, NodeContext, ProcessingHook

LOG = logging.getLogger(__name__)

NAMESPACE = "ironic_inspector.hooks.processing"


def hook_names(conf: cfg.ConfigOpts) -> list[str]:
    names = [n.strip() for n in conf.processing.processing_hooks.split(",")]
    return [n for n in names if n]


def load_hooks(conf: cfg.ConfigOpts) -> list[ProcessingHook]:
    """Instantiate the hooks named in ``[processing]processing_hooks``.

    Unknown names and unmet dependencies are configuration errors raised at
    start-up, not surprises in the middle of an introspection.
    """
    names = hook_names(conf)
    available = sorted(
        ep.name for ep in stevedore.ExtensionManager(NAMESPACE).list_entry_points()
    )
    unknown = [n for n in names if n not in available]
    if unknown:
        raise exceptions.ConfigError(
            f"Invalid configuration: [processing]processing_hooks names unknown "
            f"hooks: {', '.join(unknown)}; available: {', '.join(available)}"
        )
    duplicate = sorted({n for n in names if names.count(n) > 1})
    if duplicate:
        raise exceptions.ConfigError(
            f"Invalid configuration: [processing]processing_hooks lists "
            f"{', '.join(duplicate)} more than once"
        )
    manager: stevedore.NamedExtensionManager[ProcessingHook] = (
        stevedore.NamedExtensionManager(
            NAMESPACE,
            names=names,
            invoke_on_load=True,
            invoke_args=(conf,),
            name_order=True,
            on_load_failure_callback=_load_failed,
        )
    )
    hooks: list[ProcessingHook] = []
    for position, ext in enumerate(manager.extensions):
        hook = ext.obj
        assert hook is not None  # invoke_on_load=True
        for dependency in hook.dependencies:
            if dependency not in names[:position]:
                raise exceptions.ConfigError(
                    f"Invalid configuration: processing hook {ext.name} needs "
                    f"{dependency} enabled before it in "
                    "[processing]processing_hooks"
                )
        hook.name = ext.name
        hooks.append(hook)
    return hooks


def _load_failed(_manager: Any, entry_point: Any, exc: BaseException) -> None:
    if isinstance(exc, exceptions.InspectorError):
        raise exc
    raise exceptions.ConfigError(
        f"Invalid configuration: processing hook {getattr(entry_point, 'name', '?')} "
        f"failed to load: {exc}"
    ) from exc


def _run(hook: ProcessingHook, stage: str, uuid: str | None, call: object) -> None:
    name = getattr(hook, "name", type(hook).__name__)
    started = time.monotonic()
    try:
        call()  # type: ignore[operator]
    except exceptions.InspectorError as exc:
        LOG.debug("Hook %s %s for node %s refused: %s", name, stage, uuid, exc)
        raise
    except Exception as exc:
        LOG.exception("Hook %s failed in %s for node %s", name, stage, uuid)
        raise exceptions.ProcessingError(
            f"Unexpected exception {type(exc).__name__} during processing hook "
            f"{name}: {exc}"
        ) from exc
    LOG.debug(
        "Hook %s %s for node %s done in %.1f ms",
        name,
        stage,
        uuid,
        (time.monotonic() - started) * 1000,
    )


def run_before_processing(
    hooks: list[ProcessingHook], data: Data, uuid: str | None = None
) -> None:
    for hook in hooks:
        _run(
            hook,
            "before_processing",
            uuid,
            lambda hook=hook: hook.before_processing(data),
        )


def run_before_update(
    hooks: list[ProcessingHook], data: Data, ctx: NodeContext
) -> None:
    for hook in hooks:
        _run(
            hook,
            "before_update",
            ctx.uuid,
            lambda hook=hook: hook.before_update(data, ctx),
        )
