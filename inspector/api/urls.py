"""Links in responses, built from the WSGI environment."""

from typing import Any


def base_url(environ: dict[str, Any]) -> str:
    """``scheme://host[:port]/script-name`` of the request, without a slash.

    Read straight from the environment: werkzeug's ``host_url`` re-parses
    and re-quotes the URL on every call, a measurable share of a status GET.
    """
    scheme = environ.get("wsgi.url_scheme", "http")
    host = environ.get("HTTP_HOST")
    if not host:
        host = environ.get("SERVER_NAME", "localhost")
        port = str(environ.get("SERVER_PORT", ""))
        if port and (scheme, port) not in (("http", "80"), ("https", "443")):
            host = f"{host}:{port}"
    return f"{scheme}://{host}{environ.get('SCRIPT_NAME', '').rstrip('/')}"
