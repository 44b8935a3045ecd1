"""The inspector's API through OpenStackClient's own keystone session, at
the microversion each command needs: the endpoint the stock client plugin
uses, the version header, the API's error message as the command's error.
Loaded only by OpenStackClient."""

from typing import Any

HEADER = "X-OpenStack-Ironic-Inspector-API-Version"
SERVICE_TYPE = "baremetal-introspection"


def endpoint(manager: Any) -> str:
    """The inspector's URL as the stock client plugin finds it:
    ``--inspector-url`` (or ``INSPECTOR_URL``), else the catalog."""
    url = manager.get_configuration().get("inspector_url")
    if not url:
        url = manager.get_endpoint_for_service_type(
            SERVICE_TYPE,
            interface=getattr(manager, "interface", None),
            region_name=getattr(manager, "region_name", None),
        )
    return str(url).rstrip("/")


def call(
    manager: Any,
    method: str,
    path: str,
    version: str,
    params: dict[str, Any] | None = None,
    body: Any = None,
) -> Any:
    """``<method> <path>`` of the inspector's API at ``version``; the JSON
    body of the answer (None when it has none: 202, 204).

    :raises RuntimeError: the API answered an error: its status and its
        message, which OpenStackClient prints (exit status 1).
    """
    kwargs: dict[str, Any] = {
        "headers": {HEADER: version},
        "params": params or {},
        "raise_exc": False,
    }
    if body is not None:
        kwargs["json"] = body
    send = getattr(manager.session, method.lower())
    response = send(f"{endpoint(manager)}{path}", **kwargs)
    if response.status_code >= 400:
        raise RuntimeError(f"{response.status_code}: {error_message(response)}")
    if response.status_code in (202, 204) or not response.text:
        return None
    return response.json()


def error_message(response: Any) -> str:
    """The message of an error answer (``{"error": {"message": ...}}``)."""
    try:
        return str(response.json()["error"]["message"])
    except (ValueError, KeyError, TypeError):
        return str(response.text[:200])
