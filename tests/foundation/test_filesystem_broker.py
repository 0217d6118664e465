"""The embedded broker never shows a worker a message file that is still being written."""

from __future__ import annotations

import pytest
from kombu import Connection

from cobbler_site import filesystem_broker
from cobbler_site.celery import app

pytestmark = pytest.mark.smoke


def _channel(folder):
    conn = Connection(
        "filesystem://",
        transport="cobbler_site.filesystem_broker:Transport",
        transport_options={"data_folder_in": str(folder), "data_folder_out": str(folder)},
    )
    return conn, conn.channel()


def test_a_message_file_appears_whole_or_not_at_all(tmp_path, monkeypatch):
    conn, channel = _channel(tmp_path)
    seen_while_writing = []
    real_dumps = filesystem_broker.dumps

    def dumps_and_look(payload):
        # What a polling worker would find at the moment the payload is being written.
        seen_while_writing.extend(p.name for p in tmp_path.iterdir() if p.name.endswith(".celery.msg"))
        return real_dumps(payload)

    monkeypatch.setattr(filesystem_broker, "dumps", dumps_and_look)
    try:
        channel._put("celery", {"body": "x" * 10_000})
        assert seen_while_writing == []
        assert channel._size("celery") == 1
        assert channel._get("celery") == {"body": "x" * 10_000}
        assert [p.name for p in tmp_path.iterdir()] == []  # no partial file left behind
    finally:
        conn.release()


def test_the_embedded_mode_uses_it(settings):
    if not str(settings.CELERY_BROKER_URL).startswith("filesystem://"):
        pytest.skip("Redis broker configured")
    with app.connection_for_write() as conn:
        assert conn.get_transport_cls() is filesystem_broker.Transport
