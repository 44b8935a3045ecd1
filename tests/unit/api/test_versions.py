import pytest

from inspector import exceptions
from inspector.api import versions


def test_no_header_is_maximum() -> None:
    assert versions.negotiate(None, None) == versions.MAXIMUM


def test_legacy_header_wins() -> None:
    assert versions.negotiate("1.3", "baremetal-introspection 1.9") == (1, 3)


def test_standard_header_among_others() -> None:
    value = "compute 2.60, baremetal-introspection 1.11"
    assert versions.negotiate(None, value) == (1, 11)


@pytest.mark.parametrize("text", ["1", "1.", "a.b", "1.2.3", "", " 1.x"])
def test_malformed(text: str) -> None:
    with pytest.raises(exceptions.InvalidInput):
        versions.negotiate(text, None)


@pytest.mark.parametrize(
    "text",
    ["0.9", versions.format_version((1, versions.MAXIMUM[1] + 1)), "2.0"],
)
def test_out_of_range(text: str) -> None:
    with pytest.raises(exceptions.NotAcceptable) as err:
        versions.negotiate(text, None)
    assert err.value.code == 406
    assert text in str(err.value)


def test_response_headers() -> None:
    headers = versions.response_headers((1, 4))
    assert headers[versions.MIN_HEADER] == "1.0"
    assert headers[versions.MAX_HEADER] == versions.format_version(versions.MAXIMUM)
    assert headers[versions.HEADER] == "1.4"
