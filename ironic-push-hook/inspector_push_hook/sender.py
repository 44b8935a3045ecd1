"""One POST of a push to the service (``urllib``), and what its answer
means: delivered, refused for good (dropped), or worth sending again
(spooled)."""

import dataclasses
import http.client
import json
import ssl
import urllib.error
import urllib.request

from inspector_push_hook.settings import Settings

RETRIED = frozenset({401, 403, 408, 425, 429})
"""Refusals that may pass: the credentials or the role may be fixed, the
service may be less busy. Any 5xx too."""


@dataclasses.dataclass(frozen=True)
class Answer:
    """How one send ended."""

    status: int | None
    """The HTTP status; None when no answer came (refused connection,
    timeout, TLS failure)."""
    message: str

    @property
    def delivered(self) -> bool:
        return self.status is not None and 200 <= self.status < 300

    @property
    def worth_retrying(self) -> bool:
        """Whether sending the same push later may succeed."""
        if self.status is None:
            return True
        return self.status >= 500 or self.status in RETRIED


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    """A redirect is an answer: a POST is never sent on elsewhere (with
    the credentials)."""

    def redirect_request(self, *args: object, **kwargs: object) -> None:
        return None


def opener(settings: Settings) -> urllib.request.OpenerDirector:
    """A URL opener with the TLS settings (proxies from the environment,
    as any other client of Ironic's host)."""
    if settings.insecure:
        context = ssl.create_default_context()
        context.check_hostname = False
        context.verify_mode = ssl.CERT_NONE
    else:
        context = ssl.create_default_context(cafile=settings.cafile or None)
    return urllib.request.build_opener(
        urllib.request.HTTPSHandler(context=context), _NoRedirect()
    )


def _message(raw: bytes, status: int) -> str:
    """The service's error message (``{"error": {"message": ...}}``), else
    the start of the body."""
    text = raw[:4096].decode("utf-8", "replace")
    try:
        found = json.loads(text)["error"]["message"]
    except (ValueError, KeyError, TypeError):
        return text.strip()[:300] or f"HTTP {status}"
    return str(found)[:500]


def post(
    url_opener: urllib.request.OpenerDirector,
    url: str,
    data: bytes,
    headers: dict[str, str],
    timeout: float,
) -> Answer:
    """POST ``data`` (JSON) to ``url``; never raises for a network or HTTP
    failure: the answer says what happened."""
    request = urllib.request.Request(
        url,
        data=data,
        method="POST",
        headers={"Content-Type": "application/json", **headers},
    )
    try:
        with url_opener.open(request, timeout=timeout) as response:
            raw = response.read(65536)
            status = int(response.status)
    except urllib.error.HTTPError as exc:
        try:
            raw = exc.read(65536)
        except (OSError, http.client.HTTPException):
            raw = b""
        finally:
            exc.close()
        return Answer(exc.code, _message(raw, exc.code))
    except (OSError, http.client.HTTPException, ValueError) as exc:
        # URLError, refused, reset, timeout (socket.timeout is an OSError),
        # TLS errors; ValueError: a malformed URL
        reason = getattr(exc, "reason", None) or exc
        return Answer(None, f"{type(exc).__name__}: {reason}")
    return Answer(status, raw[:300].decode("utf-8", "replace"))
