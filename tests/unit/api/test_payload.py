"""The ramdisk payload's one schema, compiled by fastjsonschema: the answers
of the reference implementation (jsonschema), and errors that name the
place and say what is wrong in plain words."""

import copy
import json
import random
import tracemalloc
from typing import Any

import jsonschema
import pytest

from inspector import exceptions
from inspector.api import payload

BASE: dict[str, Any] = {
    "boot_interface": "01-52-54-00-12-34-56",
    "error": None,
    "inventory": {
        "interfaces": [
            {
                "name": "eth0",
                "mac_address": "52:54:00:12:34:56",
                "ipv4_address": "192.0.2.10",
                "ipv6_address": None,
                "lldp": [[1, "0004"]],
            },
            {"name": "ib0", "mac_address": ":".join(["a0"] * 20)},
        ],
        "disks": [{"name": "/dev/sda", "size": 10}],
        "cpu": {"count": 4},
        "memory": {"physical_mb": 2048},
        "bmc_address": "10.0.0.1",
        "bmc_v6address": "::/0",
        "system_vendor": {},
        "boot": {"current_boot_mode": "uefi"},
    },
    "pci_devices": [{"vendor_id": "8086"}],
    "root_disk": {"name": "/dev/sda"},
    "extra": {"anything": [1, 2]},
}

VALUES: list[Any] = [
    None,
    "",
    "eth1",
    "52:54:00:12:34:5",
    "52-54-00-12-34-56",
    "01-52-54-00-12-34-56",
    "52:54:00:12:34:56\n",
    "x" * payload.NAME_LENGTH,
    "x" * (payload.NAME_LENGTH + 1),
    0,
    1.5,
    True,
    [],
    [{}],
    ["x"],
    *(
        [{}] * (limit + past)
        for limit in (payload.LLDP_ITEMS, payload.INTERFACES, payload.DEVICES)
        for past in (0, 1)
    ),
    {},
    {"a": 1},
]
"""What each place of the payload gets in turn: right and wrong kinds,
MACs and almost-MACs, lengths at and past the limits."""

PLACES: list[tuple[str, ...]] = [
    ("error",),
    ("boot_interface",),
    ("inventory",),
    ("pci_devices",),
    ("pci_devices", "0"),
    ("root_disk",),
    ("extra",),
    *[
        ("inventory", key)
        for key in (
            "interfaces",
            "disks",
            "cpu",
            "memory",
            "bmc_address",
            "bmc_v6address",
            "system_vendor",
            "boot",
        )
    ],
    ("inventory", "interfaces", "0"),
    ("inventory", "disks", "0"),
    *[
        ("inventory", "interfaces", "1", key)
        for key in ("name", "mac_address", "ipv4_address", "ipv6_address", "lldp")
    ],
]

DROP = object()


def _put(data: dict[str, Any], place: tuple[str, ...], value: Any) -> None:
    where: Any = data
    for step in place[:-1]:
        where = where[int(step)] if isinstance(where, list) else where[step]
    last = place[-1]
    if isinstance(where, list):
        where[int(last)] = value if value is not DROP else {}
    elif value is DROP:
        where.pop(last, None)
    else:
        where[last] = value


def _variants() -> list[Any]:
    found: list[Any] = [copy.deepcopy(BASE), [], "text", None]
    for place in PLACES:
        for value in [*VALUES, DROP]:
            data = copy.deepcopy(BASE)
            _put(data, place, copy.deepcopy(value))
            found.append(data)
    chance = random.Random(20261126)
    for _ in range(2000):  # two or three changes at once
        data = copy.deepcopy(BASE)
        for place in sorted(chance.sample(PLACES, chance.randint(2, 3)), key=len):
            try:
                _put(data, place, copy.deepcopy(chance.choice([*VALUES, DROP])))
            except (KeyError, IndexError, TypeError, ValueError):
                pass  # an earlier change removed the place
        found.append(data)
    return found


def _accepted(data: Any) -> bool:
    try:
        payload.validate(data)
    except exceptions.InvalidInput as exc:
        assert str(exc).startswith("Invalid ramdisk data at ")
        return False
    return True


def test_the_compiled_schema_answers_as_jsonschema() -> None:
    """jsonschema's patterns follow Python's ``re``, where ``$`` matches
    before a final line break; fastjsonschema's follow JSON Schema's
    ECMA-262, where it does not (a MAC ending in a line break is refused):
    the reference is given that meaning (``\\Z``)."""
    ecma = json.loads(json.dumps(payload.SCHEMA).replace("$", "\\\\Z"))
    reference = jsonschema.Draft7Validator(ecma)
    answers = [(_accepted(data), reference.is_valid(data)) for data in _variants()]
    disagree = [i for i, (ours, theirs) in enumerate(answers) if ours != theirs]
    assert not disagree, disagree[:10]
    # both answers occur often: the comparison means something
    assert sum(ours for ours, _ in answers) > 100
    assert sum(not ours for ours, _ in answers) > 200


@pytest.mark.parametrize(
    ("place", "value", "words"),
    [
        (("inventory",), [], "at inventory: [] is not of type 'object'"),
        (("error",), 5, "at error: 5 is not of type 'string', 'null'"),
        (
            ("inventory", "interfaces", "0", "name"),
            "x" * (payload.NAME_LENGTH + 1),
            f"is longer than {payload.NAME_LENGTH} characters",
        ),
        (
            ("pci_devices",),
            [{}] * (payload.DEVICES + 1),
            f"at pci_devices: more than {payload.DEVICES} items",
        ),
        ((), "text", "at (the body): 'text' is not of type 'object'"),
    ],
)
def test_errors_say_what_is_wrong_where(
    place: tuple[str, ...], value: Any, words: str
) -> None:
    data: Any = copy.deepcopy(BASE)
    if place:
        _put(data, place, value)
    else:
        data = value
    with pytest.raises(exceptions.InvalidInput, match="Invalid ramdisk data") as raised:
        payload.validate(data)
    assert words in str(raised.value)


def test_a_mac_ending_in_a_line_break_is_refused() -> None:
    data = copy.deepcopy(BASE)
    data["inventory"]["interfaces"][0]["mac_address"] = "52:54:00:12:34:56\n"
    with pytest.raises(exceptions.InvalidInput, match="is not a MAC address"):
        payload.validate(data)


def test_a_payload_that_does_not_conform_names_the_mac() -> None:
    data = copy.deepcopy(BASE)
    data["inventory"]["interfaces"][1]["mac_address"] = "not-a-mac"
    with pytest.raises(exceptions.InvalidInput) as raised:
        payload.validate(data)
    assert "inventory/interfaces/1/mac_address" in str(raised.value)
    assert "'not-a-mac' is not a MAC address" in str(raised.value)
    payload.validate(copy.deepcopy(BASE))


def test_secret_looking_keys_are_redacted_at_any_depth() -> None:
    data = {
        "password": "p1",
        "inventory": {
            "bmc": {"BMC_Password": "p2", "user": "admin", "token": ""},
            "interfaces": [{"name": "eth0", "extra": [{"private_key": "k"}]}],
        },
        "ipmi_passwd": None,
        "auth": [[{"secret": 1}], "secret"],
        "tokens_seen": {"count": 3},
    }
    payload.redact(data)
    payload.redact(data)  # the keys seen before answer the same
    assert data == {
        "password": "***",
        "inventory": {
            "bmc": {"BMC_Password": "***", "user": "admin", "token": ""},
            "interfaces": [{"name": "eth0", "extra": [{"private_key": "***"}]}],
        },
        "ipmi_passwd": None,
        "auth": [[{"secret": "***"}], "secret"],
        "tokens_seen": "***",
    }


def test_the_api_compiles_the_schema_when_it_builds_its_app(conf: Any, db: Any) -> None:
    from inspector.api import app as api_app
    from inspector.baremetal.client import BaremetalClient
    from inspector.db.data_store import DataStores
    from inspector.locking import factory
    from inspector.runtime import ApiRuntime

    conf.set_override("auth_strategy", "noauth")
    conf.set_override("driver", "noop", group="pxe_filter")
    rt = ApiRuntime(
        conf=conf,
        db=db,
        baremetal=BaremetalClient(conf),
        locks=factory.from_conf(conf),
        stores=DataStores(conf, db),
        rpc=None,  # type: ignore[arg-type]  # nothing here casts
        conductors=None,  # type: ignore[arg-type]
    )
    payload._check.cache_clear()
    api_app.create_app(rt)
    assert payload._check.cache_info().currsize == 1  # before any post


def test_a_large_wrong_value_is_shown_by_its_start() -> None:
    data = copy.deepcopy(BASE)
    data["inventory"] = [{"a": "b" * 1000}] * 100_000  # ~100 MB as text
    tracemalloc.start()
    try:
        with pytest.raises(exceptions.InvalidInput) as raised:
            payload.validate(data)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 10_000_000, f"{peak} bytes to say what is wrong"
    message = str(raised.value)
    assert message.startswith("Invalid ramdisk data at inventory: [{'a': 'bbb")
    assert message.endswith("is not of type 'object'")
    assert len(message) < 150
