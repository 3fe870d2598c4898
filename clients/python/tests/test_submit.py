"""submit_job: a backend creating a job for a user waits out 429s as errand's
Retry-After asks, with the same idempotency key, and ends with one job."""

import time

import httpx
import pytest

import harness
from errand_worker import ApiError, submit_job


def test_a_rate_limited_submit_waits_then_makes_exactly_one_job(template_db, tmp_path):
    # One create a second, a burst of 60: the burst is spent first.
    server = harness.Errand(template_db, tmp_path, {"ERRAND_RATE_LIMITS__CREATES_PER_USER": "60"})
    try:
        refused = None
        for i in range(70):
            response = server.user.post(f"/jobs/{harness.JOB_TYPE}", json={}, headers={"Idempotency-Key": f"burst-{i}"})
            if response.status_code == 429:
                refused = response
                break
            assert response.status_code == 202, response.text
        assert refused is not None, "the budget never ran out"
        assert refused.json()["code"] == "rate_limited"
        assert int(refused.headers["retry-after"]) >= 1

        started = time.monotonic()
        job = submit_job(server.url, harness.user_token(), harness.JOB_TYPE, {"n": 1}, "one-intent", retry_for=30)
        assert job["status"] == "processing"
        # It was refused at least once and waited for the budget to come back.
        assert time.monotonic() - started >= 0.5
        again = submit_job(server.url, harness.user_token(), harness.JOB_TYPE, {"n": 1}, "one-intent", retry_for=30)
        assert again["id"] == job["id"]
        listed = server.user.get("/jobs", params={"limit": 100}).json()["jobs"]
        assert [j["id"] for j in listed if j["params"] == {"n": 1}] == [job["id"]]
    finally:
        server.stop()


def test_a_refusal_waiting_cannot_mend_is_raised_at_once(errand):
    with pytest.raises(ApiError) as refused:
        submit_job(errand.url, harness.user_token(), "no_such_type", {}, "k", retry_for=30)
    assert refused.value.status == 404
    # The client is its own: a caller's httpx.Client is used as given.
    with httpx.Client(timeout=5) as client:
        job = submit_job(errand.url, harness.user_token(), harness.JOB_TYPE, {}, "k2", client=client)
    assert job["status"] == "processing"


def test_a_service_submits_for_a_user_whose_job_it_becomes(errand):
    service = harness.mint_token("--service", "--name", "billing-backend", "--tenants", harness.TENANT)
    job = submit_job(
        errand.url, service, harness.JOB_TYPE, {"n": 7}, "for-alice", on_behalf_of=(harness.TENANT, harness.USER)
    )
    # Hers: her own token reads it, and her key names it.
    assert errand.user.get(f"/jobs/{job['id']}").json()["id"] == job["id"]
    again = submit_job(errand.url, harness.user_token(), harness.JOB_TYPE, {"n": 7}, "for-alice")
    assert again["id"] == job["id"]
    with pytest.raises(ApiError) as refused:
        submit_job(errand.url, service, harness.JOB_TYPE, {}, "k", on_behalf_of=("globex", "gail"), retry_for=5)
    assert refused.value.status == 403
