"""Join links friends can open: listening on every address, the link names this machine's
network address (not 127.0.0.1); listening on loopback, it stays there (the web client's room
then says so, tests/browser/test_rules.py); --public-url always wins."""

from __future__ import annotations

import ipaddress
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from solitaire_race.app import App
from solitaire_race.config import Config, loopback_only, reachable_address

from .conftest import Client, make_config


@pytest.mark.parametrize(
    ("host", "reachable", "expected"),
    [
        ("0.0.0.0", "192.168.1.20", "http://192.168.1.20:8765"),
        ("::", "2001:db8::5", "http://[2001:db8::5]:8765"),
        ("", "10.0.0.3", "http://10.0.0.3:8765"),
        ("0.0.0.0", None, "http://127.0.0.1:8765"),  # no network: this machine is all there is
        ("127.0.0.1", "192.168.1.20", "http://127.0.0.1:8765"),  # listening on loopback: only it works
        ("::1", "192.168.1.20", "http://[::1]:8765"),
        ("192.168.1.7", "192.168.1.20", "http://192.168.1.7:8765"),  # the address it listens on
    ],
)
def test_the_links_base(host: str, reachable: str | None, expected: str) -> None:
    config = Config(host=host).with_public_url(8765, reachable=lambda: reachable)
    assert config.public_url == expected
    assert config.node_url == expected


def test_public_url_wins() -> None:
    config = Config(host="0.0.0.0", public_url="https://race.example.org/").with_public_url(8765, lambda: "10.0.0.3")
    assert config.public_url == "https://race.example.org"


def test_loopback_only() -> None:
    assert all(loopback_only(h) for h in ("127.0.0.1", "127.0.1.1", "::1", "[::1]", "localhost", "LOCALHOST"))
    assert not any(loopback_only(h) for h in ("0.0.0.0", "::", "", "192.168.1.7", "race.example.org"))


def test_reachable_address_is_never_loopback() -> None:
    address = reachable_address()
    assert address is None or not ipaddress.ip_address(address).is_loopback


async def test_a_server_on_every_address_shares_links_friends_can_open(tmp_path: Path) -> None:
    app = await App.start(make_config(tmp_path, host="0.0.0.0"))
    try:
        expected = reachable_address() or "127.0.0.1"
        assert urlsplit(app.url).hostname == expected
        client = await Client.connect(app)  # through that address: the server is reached there
        try:
            await client.hello("ann")
            room = (await client.request({"type": "create_race", "game": "cruel"}))["race"]
        finally:
            await client.close()
        link = urlsplit(room["link"])
        assert (link.hostname, link.port, link.path) == (expected, app.config.port, f"/join/{room['code']}")
    finally:
        await app.stop()
