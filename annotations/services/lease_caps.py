"""A cap on live leases per client address and per network, per study: farming costs more than one IP.

The entry throttle limits how fast one address may arrive, not how many made-up worker ids it
may bring: 28 fake Prolific ids from one address once leased 28 of a demo's 117 places in a
minute. So a lease is refused once a study already has ``CROWD_MAX_LEASES_PER_IP`` live
(active, unexpired) leases from the same address, or ``CROWD_MAX_LEASES_PER_NETWORK`` from
the same /24 (IPv4) or /64 (IPv6). 0 switches a cap off.

The address is personal data: an assignment keeps only keyed hashes (annotations.pseudonyms,
PSEUDONYM_KEY) of the address and of its network, never the address itself. Callers without
a client (``seed_demo``'s simulated crowd, which plays through the services, not over HTTP)
pass no network, and no cap applies to them.
"""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass

from django.conf import settings
from django.db import connection
from django.utils import timezone

from annotations.models import Assignment, Study
from annotations.pseudonyms import pseudonymise

IPV4_PREFIX = 24
IPV6_PREFIX = 64


class LeaseCapReached(Exception):
    """This address (or its network) already holds as many live leases of the study as allowed."""


@dataclass(frozen=True)
class ClientNetwork:
    """Keyed hashes of a client's address and of its /24 or /64: what a lease records."""

    address_hash: str
    network_hash: str


def client_network(address: str) -> ClientNetwork | None:
    """The hashes of ``address`` and its network; None when it is not an IP address."""
    try:
        ip = ipaddress.ip_address(address.strip())
    except ValueError:
        return None
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped  # ::ffff:1.2.3.4 is 1.2.3.4
    prefix = IPV4_PREFIX if ip.version == 4 else IPV6_PREFIX
    network = ipaddress.ip_network(f"{ip}/{prefix}", strict=False)
    return ClientNetwork(pseudonymise("client-ip", str(ip)), pseudonymise("client-net", str(network)))


def max_leases_per_address() -> int:
    return max(0, int(getattr(settings, "CROWD_MAX_LEASES_PER_IP", 3) or 0))


def max_leases_per_network() -> int:
    return max(0, int(getattr(settings, "CROWD_MAX_LEASES_PER_NETWORK", 10) or 0))


def _live_leases(study: Study):
    return Assignment.objects.filter(batch__study=study, status=Assignment.Status.ACTIVE).exclude(
        leased_until__lt=timezone.now()
    )


def lock_network(network: ClientNetwork) -> None:
    """Serialise claims from one network for the rest of the transaction.

    PostgreSQL: a transaction-scoped advisory lock on the network hash, so two fake ids from
    one /24 cannot both pass the count. SQLite runs writers one at a time already
    (IMMEDIATE transactions).
    """
    if connection.vendor == "postgresql":
        key = int(network.network_hash[:15], 16)  # fits a signed bigint
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_advisory_xact_lock(%s)", [key])


def check_lease_caps(*, study: Study, network: ClientNetwork | None) -> None:
    """Raise LeaseCapReached if one more lease from ``network`` would pass a cap; call under ``lock_network``."""
    if network is None:
        return
    per_address, per_network = max_leases_per_address(), max_leases_per_network()
    if per_address and _live_leases(study).filter(client_ip_hash=network.address_hash).count() >= per_address:
        raise LeaseCapReached("address")
    if per_network and _live_leases(study).filter(client_net_hash=network.network_hash).count() >= per_network:
        raise LeaseCapReached("network")
