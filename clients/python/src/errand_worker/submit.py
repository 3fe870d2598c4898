"""Submitting jobs for a user, from a backend: `POST /jobs/{type}` with one
idempotency key per intent, retried (with that same key) through network
errors, 429 and 503, waiting as long as errand's `Retry-After` asks::

    from errand_worker import submit_job

    job = submit_job("https://errand.example.com", user_token, "export_sales_report",
                     {"from": "2026-01-01", "to": "2026-03-31"}, idempotency_key=intent_id)

A backend acting for its users submits with a service token (`errand token
--service`) and names the person: `on_behalf_of=("acme", "alice")` (the
header `Errand-On-Behalf-Of: acme/alice`); the job is theirs.

The key makes every retry name the same job: however many tries it takes,
there is one job. A refusal that waiting will not mend (a bad param, a key
reused for another request) raises `ApiError` at once; running out of
`retry_for` raises `Unreachable`.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import quote

import httpx

from .api import send_retrying


def submit_job(
    base_url: str,
    token: str,
    job_type: str,
    params: dict[str, Any],
    idempotency_key: str,
    retry_for: float = 120.0,
    client: httpx.Client | None = None,
    on_behalf_of: tuple[str, str] | None = None,
) -> dict[str, Any]:
    """Record the job (or find the one `idempotency_key` names) and answer it
    as errand shows it (`status` `processing` at first); with a service token,
    for the tenant's user `on_behalf_of` names, `(tenant, user)`."""
    own = client is None
    http = client or httpx.Client(timeout=30)
    try:
        url = f"{base_url.rstrip('/')}/jobs/{job_type}"
        headers = {"Authorization": f"Bearer {token}", "Idempotency-Key": idempotency_key}
        if on_behalf_of is not None:
            tenant, user = on_behalf_of
            headers["Errand-On-Behalf-Of"] = f"{quote(tenant, safe='')}/{quote(user, safe='')}"

        def build() -> httpx.Request:
            return http.build_request("POST", url, json=params, headers=headers)

        job: dict[str, Any] = send_retrying(http, build, retry_for).json()
        return job
    finally:
        if own:
            http.close()
