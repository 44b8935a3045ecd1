"""The JSON-RPC wire format: parsing, limits and answers."""

import json

import pytest

from inspector.jsonrpc import protocol


@pytest.mark.parametrize(
    ("body", "deepest"),
    [
        (b"1", 0),
        (b"{}", 1),
        (b'{"a": [1, {"b": []}]}', 4),
        (b'{"a": "[[[[[[[[[[[[["}', 1),  # brackets in strings do not count
        (b'{"a": "\\"[[[[", "b": [[]]}', 3),  # nor after an escaped quote
        (b"[" * 50 + b"]" * 50, 50),
    ],
)
def test_depth(body: bytes, deepest: int) -> None:
    assert protocol.depth(body) == deepest


def test_a_request_and_a_notification() -> None:
    request = protocol.parse(protocol.request("process", {"uuid": "u"}, 7))
    assert request == protocol.Request("process", {"uuid": "u"}, 7)
    assert not request.is_notification
    body = json.dumps({"jsonrpc": "2.0", "method": "abort"}).encode()
    notification = protocol.parse(body)
    assert notification.is_notification and notification.params == {}


@pytest.mark.parametrize(
    ("body", "code"),
    [
        (b"", protocol.PARSE_ERROR),
        (b"\xff\xfe", protocol.PARSE_ERROR),
        (b"[" * 9 + b"]" * 9, protocol.INVALID_REQUEST),
        (b'"process"', protocol.INVALID_REQUEST),
        (b'{"jsonrpc": "2.0", "method": "x", "id": true}', protocol.INVALID_REQUEST),
        (b'{"jsonrpc": "2.0", "method": "", "id": 1}', protocol.INVALID_REQUEST),
        (b'{"method": "x", "id": 1}', protocol.INVALID_REQUEST),
        (b'{"jsonrpc": "2.0", "method": "x", "params": 3}', protocol.INVALID_PARAMS),
    ],
)
def test_refused(body: bytes, code: int) -> None:
    with pytest.raises(protocol.RpcError) as caught:
        protocol.parse(body)
    assert caught.value.code == code
    assert caught.value.http_status in (400, 404)


def test_an_error_keeps_the_request_id() -> None:
    with pytest.raises(protocol.RpcError) as caught:
        protocol.parse(b'{"jsonrpc": "1.0", "method": "x", "id": "abc"}')
    answer = json.loads(protocol.error(caught.value))
    assert answer == {
        "jsonrpc": "2.0",
        "error": {"code": -32600, "message": 'jsonrpc must be "2.0"'},
        "id": "abc",
    }
    assert json.loads(protocol.result(5, None)) == {
        "jsonrpc": "2.0",
        "result": None,
        "id": 5,
    }
