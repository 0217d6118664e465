"""Where a judge may send its requests (and its key): ``settings.JUDGE_ALLOWED_HOSTS``.

Entries, any mix:

- ``public-https``: any https URL whose host resolves only to public (global) addresses;
- ``loopback``: a host that resolves only to 127.0.0.0/8 or ::1, over http or https
  (the default includes it only when DEBUG is on: the local simulator, a local vLLM);
- ``host``, ``host:port``, ``*.example.org``, ``10.0.0.5:8000``, ``[fd00::5]:8000``,
  optionally with a scheme (``http://10.0.0.5:8000`` allows only http): that host,
  whatever it resolves to, e.g. a lab's vLLM on a private network;
- a CIDR such as ``10.0.0.0/24``: any host whose addresses all fall in it.

Anything else, including private, link-local (cloud metadata at 169.254.169.254),
multicast and reserved addresses, is refused. ``check_base_url`` raises ``ValueError``
with a one-line reason; the judge form, the API, ``create_judge`` and every call check it.
"""

from __future__ import annotations

import fnmatch
import ipaddress
import socket
import threading
import time
from urllib.parse import urlsplit

from django.conf import settings

Address = ipaddress.IPv4Address | ipaddress.IPv6Address
_DEFAULT_PORTS = {"http": 80, "https": 443}


def _resolve(host: str, port: int) -> list[Address]:
    try:
        return [ipaddress.ip_address(host.strip("[]"))]
    except ValueError:
        pass
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except (socket.gaierror, UnicodeError, OSError):
        raise ValueError(f"cannot resolve host {host!r}") from None
    addresses = []
    for info in infos:
        raw = str(info[4][0]).split("%", 1)[0]  # drop an IPv6 zone id (the host is a str for INET/INET6)
        address = ipaddress.ip_address(raw)
        if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped:
            address = address.ipv4_mapped
        addresses.append(address)
    if not addresses:
        raise ValueError(f"cannot resolve host {host!r}")
    return addresses


def _split_entry(entry: str) -> tuple[str, str, int | None]:
    """'http://10.0.0.5:8000' -> ('http', '10.0.0.5', 8000); 'api.x.org' -> ('', 'api.x.org', None)."""
    scheme, sep, rest = entry.partition("://")
    if not sep:
        scheme, rest = "", entry
    rest = rest.split("/", 1)[0]
    if rest.startswith("["):  # [v6]:port
        host, _, tail = rest[1:].partition("]")
        port = tail.removeprefix(":")
    elif rest.count(":") == 1:
        host, _, port = rest.partition(":")
    else:
        host, port = rest, ""
    return scheme.lower(), host.lower(), int(port) if port.isdigit() else None


def _entry_matches(entry: str, scheme: str, host: str, port: int) -> bool:
    e_scheme, e_host, e_port = _split_entry(entry)
    if e_scheme and e_scheme != scheme:
        return False
    if e_port is not None and e_port != port:
        return False
    return fnmatch.fnmatchcase(host, e_host) if "*" in e_host else host == e_host


def _is_network(entry: str) -> ipaddress.IPv4Network | ipaddress.IPv6Network | None:
    if "/" not in entry:
        return None
    try:
        return ipaddress.ip_network(entry, strict=False)
    except ValueError:
        return None


def check_base_url(url: str, allowed: list[str] | None = None) -> None:
    """Raise ValueError (one line, no secrets) unless ``url`` may receive a judge's requests."""
    allowed = list(settings.JUDGE_ALLOWED_HOSTS if allowed is None else allowed)
    parts = urlsplit(url.strip())
    scheme = parts.scheme.lower()
    if scheme not in _DEFAULT_PORTS:
        raise ValueError("base URL must be http:// or https://")
    if parts.username is not None or parts.password is not None:
        raise ValueError("base URL must not contain credentials; use the judge's key instead")
    try:
        host, port = (parts.hostname or "").lower(), parts.port or _DEFAULT_PORTS[scheme]
    except ValueError:
        raise ValueError("base URL has a bad port") from None
    if not host:
        raise ValueError("base URL has no host")
    named = [e for e in allowed if e not in ("public-https", "loopback") and _is_network(e) is None]
    if any(_entry_matches(e, scheme, host, port) for e in named):
        return
    addresses = _resolve(host, port)
    networks = [n for n in map(_is_network, allowed) if n is not None]
    if networks and all(any(a in n for n in networks) for a in addresses):
        return
    if "loopback" in allowed and all(a.is_loopback for a in addresses):
        return
    if "public-https" in allowed and scheme == "https" and all(a.is_global for a in addresses):
        return
    kind = (
        "loopback"
        if all(a.is_loopback for a in addresses)
        else "public"
        if all(a.is_global for a in addresses)
        else "private or reserved"
    )
    hint = " over http (use https)" if kind == "public" else ""
    raise ValueError(f"base URL host {host} ({kind} address){hint} is not allowed by JUDGE_ALLOWED_HOSTS")


_checked: dict[tuple, tuple[float, str]] = {}
_checked_lock = threading.Lock()
CHECK_TTL = 60.0


def check_base_url_cached(url: str) -> None:
    """``check_base_url`` for the call path: one DNS lookup per URL a minute, not per call."""
    key = (url, tuple(settings.JUDGE_ALLOWED_HOSTS))
    now = time.monotonic()
    with _checked_lock:
        hit = _checked.get(key)
    if hit is None or now - hit[0] > CHECK_TTL:
        try:
            check_base_url(url)
            verdict = ""
        except ValueError as exc:
            verdict = str(exc)
        with _checked_lock:
            if len(_checked) > 1024:
                _checked.clear()
            _checked[key] = (now, verdict)
        hit = (now, verdict)
    if hit[1]:
        raise ValueError(hit[1])
