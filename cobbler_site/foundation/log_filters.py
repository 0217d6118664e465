"""Logging filters named in settings.LOGGING."""

from __future__ import annotations

import logging
import os

SIMULATOR_PATH = "/sim/v1/"


class QuietSimulatorRequests(logging.Filter):
    """Drops the development server's access line for each answered simulator call.

    Under `make run` the demo judge calls the simulator mounted in the same server hundreds of
    times a minute, and those lines bury every other request (a worker's, a researcher's).
    Errors (4xx, 5xx) still show; SIMULATOR_REQUEST_LOG=1 shows every line.
    """

    def filter(self, record: logging.LogRecord) -> bool:
        if os.environ.get("SIMULATOR_REQUEST_LOG") == "1":
            return True
        status = getattr(record, "status_code", 500)
        return not (SIMULATOR_PATH in record.getMessage() and isinstance(status, int) and status < 400)
