"""verify_webhook agrees with errand's signer and with the Standard Webhooks
reference library, and refuses the rest.

The end-to-end test registers an endpoint of its own (an http.server on
127.0.0.1, allowed through `webhooks.allow_hosts`) as acme's tenant admin,
ends a job, and checks the delivery errand makes with both verifiers.
"""

import json
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import NamedTuple

import pytest
from standardwebhooks.webhooks import Webhook
from standardwebhooks.webhooks import WebhookVerificationError as ReferenceVerificationError

import harness
from errand_worker import WebhookVerificationError, verify_webhook
from errand_worker.webhooks import sign_webhook

# The example of the Standard Webhooks reference libraries' tests (errand's
# signer has it as a unit test too: src/webhooks.rs).
REF_SECRET = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
REF_ID = "msg_p5jXN8AQM9LWM0D4loKWxJek"
REF_AT = 1614265330
REF_BODY = b'{"test": 2432232314}'
REF_SIGNATURE = "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE="
REF_HEADERS = {"webhook-id": REF_ID, "webhook-timestamp": str(REF_AT), "webhook-signature": REF_SIGNATURE}


def refused(secret, headers, body, **options) -> str:
    """The message verify_webhook refuses with; fails the test if it accepts."""
    with pytest.raises(WebhookVerificationError) as caught:
        verify_webhook(secret, headers, body, **options)
    return str(caught.value)


# The helper alone.


def test_the_reference_example_is_accepted():
    assert sign_webhook(REF_SECRET, REF_ID, REF_AT, REF_BODY) == REF_SIGNATURE
    assert verify_webhook(REF_SECRET, REF_HEADERS, REF_BODY, now=REF_AT) == {"test": 2432232314}
    # Header names in any case; the body as bytes or text.
    shouted = {name.upper(): value for name, value in REF_HEADERS.items()}
    assert verify_webhook(REF_SECRET, shouted, REF_BODY.decode(), now=REF_AT) == {"test": 2432232314}
    # Any one v1 signature of several may match (a secret being rotated); other versions are skipped.
    several = dict(REF_HEADERS, **{"webhook-signature": f"v1,Zm9v v1a,abc {REF_SIGNATURE} v2,bm90"})
    assert verify_webhook(REF_SECRET, several, REF_BODY, now=REF_AT) == {"test": 2432232314}
    # Within the tolerance either way.
    assert verify_webhook(REF_SECRET, REF_HEADERS, REF_BODY, now=REF_AT + 300)
    assert verify_webhook(REF_SECRET, REF_HEADERS, REF_BODY, now=REF_AT - 300)


def test_the_reference_example_altered_is_refused():
    other_secret = "whsec_" + "A" * 43 + "="
    assert "signature" in refused(other_secret, REF_HEADERS, REF_BODY, now=REF_AT)
    assert "signature" in refused(REF_SECRET, REF_HEADERS, b'{"test": 2432232315}', now=REF_AT)
    assert "signature" in refused(REF_SECRET, dict(REF_HEADERS, **{"webhook-id": "msg_other"}), REF_BODY, now=REF_AT)
    # The timestamp is signed: a fresh one on an old signature does not pass.
    moved = dict(REF_HEADERS, **{"webhook-timestamp": str(REF_AT + 1)})
    assert "signature" in refused(REF_SECRET, moved, REF_BODY, now=REF_AT)
    for junk in [
        "",
        "v1,",
        "v1",
        "g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=",
        "v2," + REF_SIGNATURE[3:],
        "v1,not base64!",
    ]:
        assert refused(REF_SECRET, dict(REF_HEADERS, **{"webhook-signature": junk}), REF_BODY, now=REF_AT)


def test_an_old_or_future_delivery_is_refused():
    assert "too old" in refused(REF_SECRET, REF_HEADERS, REF_BODY, now=REF_AT + 301)
    assert "future" in refused(REF_SECRET, REF_HEADERS, REF_BODY, now=REF_AT - 301)
    assert verify_webhook(REF_SECRET, REF_HEADERS, REF_BODY, now=REF_AT + 301, tolerance=600)
    # Without `now`, the clock: the reference example is years old.
    assert "too old" in refused(REF_SECRET, REF_HEADERS, REF_BODY)
    not_a_number = dict(REF_HEADERS, **{"webhook-timestamp": "soon"})
    assert "webhook-timestamp" in refused(REF_SECRET, not_a_number, REF_BODY, now=REF_AT)


def test_missing_headers_are_refused():
    for name in REF_HEADERS:
        without = {other: value for other, value in REF_HEADERS.items() if other != name}
        assert name in refused(REF_SECRET, without, REF_BODY, now=REF_AT)
    assert "missing" in refused(REF_SECRET, {}, REF_BODY, now=REF_AT)


def test_a_signed_body_that_is_not_a_json_object_is_refused():
    for body in [b"not json", b"[1, 2]"]:
        headers = dict(REF_HEADERS, **{"webhook-signature": sign_webhook(REF_SECRET, REF_ID, REF_AT, body)})
        assert "JSON" in refused(REF_SECRET, headers, body, now=REF_AT)


def test_a_secret_that_is_not_one_is_a_value_error():
    with pytest.raises(ValueError, match="whsec_ and the base64 of its key"):
        verify_webhook("whsec_!!not base64!!", REF_HEADERS, REF_BODY, now=REF_AT)
    with pytest.raises(ValueError, match="secret is empty"):
        verify_webhook("whsec_", REF_HEADERS, REF_BODY, now=REF_AT)


# Against errand.


class Delivery(NamedTuple):
    path: str
    headers: dict[str, str]
    body: bytes


class Endpoint:
    """A webhook endpoint on 127.0.0.1 that answers 204 and keeps every delivery."""

    def __init__(self) -> None:
        self.deliveries: list[Delivery] = []
        deliveries = self.deliveries

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # http.server's name
                body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
                deliveries.append(Delivery(self.path, dict(self.headers.items()), body))
                self.send_response(204)
                self.end_headers()

            def log_message(self, format: str, *args) -> None:  # quiet
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/hooks/errand"
        self.thread = threading.Thread(target=self.server.serve_forever, name="webhook-endpoint", daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()
        self.thread.join(10)


@pytest.fixture
def webhook_errand(template_db, tmp_path) -> Iterator[harness.Errand]:
    """A running errand that may deliver to 127.0.0.1, looking for due deliveries often."""
    with harness.Errand.running(template_db, tmp_path, harness.WEBHOOKS_ENV) as server:
        yield server


@pytest.fixture
def endpoint() -> Iterator[Endpoint]:
    receiver = Endpoint()
    try:
        yield receiver
    finally:
        receiver.close()


def test_errands_delivery_verifies_with_both_libraries(webhook_errand, endpoint):
    registered = webhook_errand.register_webhook(endpoint.url, ["job.completed", "job.failed", "job.cancelled"])
    secret = registered["secret"]
    assert secret.startswith("whsec_"), registered

    job_id = webhook_errand.submit({}, job_type="noop")
    job = webhook_errand.wait_for_end(job_id)
    assert job["status"] == "completed", job
    harness.wait_until(lambda: endpoint.deliveries, timeout=15, what="errand's webhook delivery")
    received_at = time.time()
    [delivery] = endpoint.deliveries
    headers = {name.lower(): value for name, value in delivery.headers.items()}
    assert delivery.path == "/hooks/errand"
    assert headers["content-type"] == "application/json"
    assert abs(int(headers["webhook-timestamp"]) - received_at) < 60, headers

    # The package's helper, with the headers as http.server received them.
    payload = verify_webhook(secret, delivery.headers, delivery.body)
    assert payload["type"] == "job.completed", payload
    assert payload["data"] == webhook_errand.job(job_id), payload
    # The Standard Webhooks reference library, independently.
    assert Webhook(secret).verify(delivery.body, delivery.headers) == payload

    # A tampered body, a wrong secret, a stale timestamp: refused.
    tampered = delivery.body.replace(b'"completed"', b'"failed"', 1)
    assert tampered != delivery.body
    assert "signature" in refused(secret, delivery.headers, tampered)
    another = webhook_errand.register_webhook(endpoint.url, ["job.completed"])["secret"]
    assert another != secret
    assert "signature" in refused(another, delivery.headers, delivery.body)
    stamp = int(headers["webhook-timestamp"])
    assert "too old" in refused(secret, delivery.headers, delivery.body, now=stamp + 301)
    # A timestamp made fresh by hand breaks the signature instead.
    restamped = dict(headers, **{"webhook-timestamp": str(stamp + 400)})
    assert "signature" in refused(secret, restamped, delivery.body, now=stamp + 400)
    # The reference library refuses them too.
    for bad_secret, bad_headers, bad_body in [
        (secret, headers, tampered),
        (another, headers, delivery.body),
        (secret, restamped, delivery.body),
    ]:
        with pytest.raises(ReferenceVerificationError):
            Webhook(bad_secret).verify(bad_body, bad_headers)

    # The body is compact JSON as errand wrote it, and the helper parsed it as is.
    assert json.loads(delivery.body) == payload
