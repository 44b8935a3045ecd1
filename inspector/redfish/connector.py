"""sushy's HTTP connector for one BMC, with the environment read once.

sushy sends every Redfish request through a ``requests.Session`` that
trusts the environment, so each request reads the proxy variables, the
CA-bundle variables and ``~/.netrc`` again: about a fifth of the CPU of
asking a BMC (doc/benchmarks.md). Here they are read once, when the
connector of a BMC session is made, and the session stops reading them.
Proxies, ``no_proxy`` and ``REQUESTS_CA_BUNDLE`` still apply as they would
have (a process's environment does not change while it runs).

sushy has no public way to reach its session (``Connector._session``), so
this module reads that one private field and nowhere else does
(:data:`SUSHY_FIELDS`; ``tests/unit/redfish/test_sushy_internals.py``
checks the installed sushy still has it, within the range setup.cfg
allows).
"""

import requests
from sushy import connector as sushy_connector

MIN_DELAY = 0.001
"""The delay given to sushy for ``[redfish]retry_delay = 0`` (0 means 2 s)."""

SUSHY_FIELDS = ("_session",)
"""The private fields of sushy's ``Connector`` read here."""


def environment(address: str, verify: bool | str) -> tuple[dict[str, str], bool | str]:
    """The proxies for ``address`` and the TLS verification to use, as
    requests would find them in the environment for each request."""
    with requests.Session() as reader:
        found = reader.merge_environment_settings(address, {}, None, verify, None)
    return dict(found["proxies"] or {}), found["verify"]


def make(
    address: str,
    verify: bool | str,
    retries: int,
    retry_delay: float,
    timeout: float,
) -> sushy_connector.Connector:
    """A sushy connector to ``address`` that reads no environment per
    request (see the module)."""
    proxies, verify = environment(address, verify)
    connector = sushy_connector.Connector(
        address,
        verify=verify,
        # sushy reads these twice: as the retries of a request answered 5xx,
        # and as the tries in all of a request that could not be sent, where
        # 0 means its own 3 tries 2 s apart (so never 0 here)
        server_side_retries=max(retries, 1),
        server_side_retries_delay=max(retry_delay, MIN_DELAY),
        default_request_timeout=timeout,
        connect_timeout=timeout,
    )
    session: requests.Session = connector._session
    session.trust_env = False
    session.proxies.update(proxies)
    return connector
