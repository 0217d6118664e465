"""Farming costs more than one address: a cap on live leases per address and network, the
platforms' id formats at the door, and a qualification drawn from a pool (issue 23, item 4)."""

from __future__ import annotations

import pytest
from django.test import Client, override_settings
from django.urls import reverse

from annotations import services
from annotations.models import Assignment, Participant
from annotations.pseudonyms import pseudonymise
from annotations.services.lease_caps import client_network
from tests.annotations.conftest import build_study, enter, mturk_worker_id, prolific_id, qualify

CAPS = {"CROWD_MAX_LEASES_PER_IP": 3, "CROWD_MAX_LEASES_PER_NETWORK": 10}


@pytest.fixture
def demo_sized(db):
    """A study with plenty of free places (the demo had 117), so only the cap can stop a farmer."""
    study = build_study("farm", overlap=10)
    for condition in ("bandwagon", "attentional", "order"):
        services.generate_batches(study=study, condition=condition, seed=3, pairs_per_batch=2)
    return study


def _arrive(study, pid: str, ip: str) -> int:
    """One worker over HTTP from ``ip``: entry, consent, qualification, then the router's status."""
    client = Client(REMOTE_ADDR=ip)
    enter(client, study, PROLIFIC_PID=pid, STUDY_ID="61f0e1d2c3b4a5968778695a", SESSION_ID=f"s-{pid}")
    qualify(client, study)
    return client.get(reverse("annotations:work", args=[study.slug])).status_code


@override_settings(**CAPS)
def test_28_fake_prolific_ids_from_one_address_lease_at_most_the_cap(demo_sized):
    statuses = [_arrive(demo_sized, prolific_id(f"fake-{n}"), "203.0.113.7") for n in range(28)]
    assert statuses.count(302) == 3 and statuses.count(429) == 25  # 302: to the first task
    assert Assignment.objects.filter(status=Assignment.Status.ACTIVE).count() == 3
    # The refused workers saw why, and got nothing.
    page = Client(REMOTE_ADDR="203.0.113.7")
    enter(page, demo_sized, PROLIFIC_PID=prolific_id("fake-late"), SESSION_ID="late")
    qualify(page, demo_sized)
    refused = page.get(reverse("annotations:work", args=[demo_sized.slug]))
    assert refused.status_code == 429 and b"from your network" in refused.content
    assert refused["Cache-Control"].startswith("max-age=0") or "no-store" in refused["Cache-Control"]


@override_settings(**CAPS)
def test_the_network_cap_counts_a_whole_slash_24_and_a_slash_64(demo_sized):
    ips = [f"198.51.100.{n}" for n in range(1, 15)]  # 14 addresses of one /24, one id each
    statuses = [_arrive(demo_sized, prolific_id(f"net-{ip}"), ip) for ip in ips]
    assert statuses.count(302) == 10
    v6 = [f"2001:db8:1:2::{n:x}" for n in range(1, 13)]  # one /64
    statuses = [_arrive(demo_sized, prolific_id(f"net-{ip}"), ip) for ip in v6]
    assert statuses.count(302) == 10
    assert _arrive(demo_sized, prolific_id("elsewhere"), "192.0.2.1") == 302  # another network is free


@override_settings(**CAPS)
def test_the_cap_counts_live_leases_only_and_stores_no_address(demo_sized):
    for n in range(3):
        assert _arrive(demo_sized, prolific_id(f"live-{n}"), "203.0.113.9") == 302
    assert _arrive(demo_sized, prolific_id("live-3"), "203.0.113.9") == 429
    stored = list(Assignment.objects.values_list("client_ip_hash", "client_net_hash"))
    assert stored and all(len(ip) == 64 and len(net) == 64 for ip, net in stored)
    assert "203.0.113" not in str(stored)
    assert stored[0] == (pseudonymise("client-ip", "203.0.113.9"), pseudonymise("client-net", "203.0.113.0/24"))
    # A lease that ends (submitted, expired or returned) frees its place for the next worker.
    Assignment.objects.filter(pk=Assignment.objects.first().pk).update(status=Assignment.Status.EXPIRED)
    assert _arrive(demo_sized, prolific_id("live-4"), "203.0.113.9") == 302


def test_client_networks_hash_the_prefix_and_ignore_non_addresses():
    assert client_network("unknown") is None
    a, b = client_network("10.1.2.3"), client_network("10.1.2.250")
    assert a and b and a.network_hash == b.network_hash and a.address_hash != b.address_hash
    assert client_network("::ffff:10.1.2.3") == a  # an IPv4-mapped address is the IPv4 address
    assert client_network("2001:db8::1").network_hash == client_network("2001:db8::ffff:1").network_hash


def test_the_simulated_crowd_has_no_address_and_no_cap(demo_sized):
    # seed_demo plays its crowd through the services, not over HTTP: no network, no cap.
    with override_settings(CROWD_MAX_LEASES_PER_IP=1, CROWD_MAX_LEASES_PER_NETWORK=1):
        for n in range(3):
            entry = services.parse_entry({"code": f"sim-{n}"})
            participant, session_hash = services.enter_study(study=demo_sized, entry=entry)
            Participant.objects.filter(pk=participant.pk).update(qualified=True, consented_at="2026-01-01T00:00Z")
            participant.refresh_from_db()
            assert services.next_step(participant=participant, session_hash=session_hash).name == "task"


# --- The platforms' id formats ----------------------------------------------------------------


@pytest.mark.parametrize(
    "query",
    [
        "PROLIFIC_PID=pid-1&SESSION_ID=s",
        "PROLIFIC_PID=5f1a2b3c4d5e6f7a8b9c0d1&SESSION_ID=s",  # 23 hex
        "PROLIFIC_PID=5f1a2b3c4d5e6f7a8b9c0d1g&SESSION_ID=s",  # a g
        "workerId=W1&assignmentId=A1&hitId=H1",
        "workerId=a1b2c3d4e5f6g7h&assignmentId=A1&hitId=H1",  # lowercase
        "workerId=A12345678901&assignmentId=A1&hitId=H1",  # 11 after the A
        f"workerId=A{'1' * 21}&assignmentId=A1&hitId=H1",  # 21 after the A
    ],
)
def test_made_up_platform_ids_are_refused_with_a_clear_page(client, demo_sized, query):
    response = client.get(reverse("annotations:start", args=[demo_sized.slug]) + "?" + query)
    assert response.status_code == 400
    assert b"This is not a Prolific ID" in response.content or b"This is not an MTurk worker ID" in response.content
    assert Participant.objects.count() == 0 and f"cw_{demo_sized.pk}" not in response.cookies


def test_well_formed_platform_ids_and_plain_codes_enter(demo_sized):
    enter(Client(), demo_sized, PROLIFIC_PID="5F1A2B3C4D5E6F7A8B9C0D1E", SESSION_ID="s")
    enter(Client(), demo_sized, workerId="A1B2C3D4E5F6G", assignmentId="X1", hitId="H1")  # 12 after the A
    enter(Client(), demo_sized, workerId=f"A{'Z' * 20}", assignmentId="X2", hitId="H1")  # 20 after the A
    enter(Client(), demo_sized, workerId=mturk_worker_id("x"), assignmentId="X3", hitId="H1")
    enter(Client(), demo_sized, code="anything-goes_1")  # ?code= links are unchanged
    assert Participant.objects.count() == 5
