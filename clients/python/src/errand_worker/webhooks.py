"""Checking errand's webhooks, for apps that hear when a tenant's jobs end.

A tenant's admin registers an endpoint (``POST /webhooks``) and is shown its
secret once, ``whsec_`` and the base64 of a 32-byte key. errand POSTs each
event to it signed as Standard Webhooks specifies
(https://www.standardwebhooks.com): the headers ``webhook-id`` (the delivery,
the same on every retry: deduplicate on it), ``webhook-timestamp`` (unix
seconds) and ``webhook-signature``, ``v1,`` and the base64 of HMAC-SHA256 of
``"<id>.<timestamp>.<body>"`` under the key. The body is
``{"type": "job.completed", "timestamp": ..., "data": <the job>}``. Check it
on the raw body before trusting anything in it::

    from errand_worker import WebhookVerificationError, verify_webhook

    try:
        event = verify_webhook(SECRET, request.headers, request.body)
    except WebhookVerificationError:
        return 400
"""

import base64
import binascii
import hashlib
import hmac
import json
import time
from collections.abc import Mapping
from typing import Any, Optional, Union

from .errors import WebhookVerificationError

#: Deliveries older (or newer) than this many seconds are refused: a replayed
#: one carries its old timestamp, which the signature covers.
DEFAULT_TOLERANCE = 300

SECRET_PREFIX = "whsec_"


def _key(secret: Union[str, bytes]) -> bytes:
    """The HMAC key of ``secret``: ``whsec_`` and base64 as errand shows it
    (the prefix may be left off), or the raw key as bytes."""
    if isinstance(secret, bytes):
        key = secret
    else:
        encoded = secret[len(SECRET_PREFIX) :] if secret.startswith(SECRET_PREFIX) else secret
        try:
            key = base64.b64decode(encoded, validate=True)
        except (binascii.Error, ValueError):
            # A wrong secret is the receiver's configuration, not a bad delivery.
            raise ValueError("a webhook secret is whsec_ and the base64 of its key") from None
    if not key:
        raise ValueError("the webhook secret is empty")
    return key


def sign_webhook(secret: Union[str, bytes], msg_id: str, timestamp: int, body: bytes) -> str:
    """The ``webhook-signature`` value errand sends for ``body`` as delivery
    ``msg_id`` at ``timestamp``."""
    signed = f"{msg_id}.{timestamp}.".encode() + body
    digest = hmac.new(_key(secret), signed, hashlib.sha256).digest()
    return "v1," + base64.b64encode(digest).decode("ascii")


def verify_webhook(
    secret: Union[str, bytes],
    headers: Mapping[str, str],
    body: Union[bytes, str],
    *,
    tolerance: int = DEFAULT_TOLERANCE,
    now: Optional[float] = None,
) -> dict[str, Any]:
    """The parsed payload of a delivery, once ``headers`` prove it is errand's
    signature of the raw ``body`` under the endpoint's ``secret``, made within
    ``tolerance`` seconds of ``now``. Header names are matched in any case;
    any one ``v1`` signature of the (space-separated) header may match, so a
    rotated secret's old and new signatures both pass. Compares in constant
    time.

    Raises `WebhookVerificationError` when a header is missing or malformed,
    the timestamp is out of tolerance, or no signature matches; `ValueError`
    when ``secret`` itself is not a webhook secret.
    """
    key = _key(secret)
    raw = body.encode() if isinstance(body, str) else bytes(body)
    lowered = {name.lower(): value for name, value in headers.items()}
    msg_id = lowered.get("webhook-id")
    stamp = lowered.get("webhook-timestamp")
    signatures = lowered.get("webhook-signature")
    if not (msg_id and stamp and signatures):
        missing = [
            name
            for name, value in [("webhook-id", msg_id), ("webhook-timestamp", stamp), ("webhook-signature", signatures)]
            if not value
        ]
        raise WebhookVerificationError(f"missing header(s): {', '.join(missing)}")
    try:
        timestamp = int(stamp.strip())
    except ValueError:
        raise WebhookVerificationError(f"webhook-timestamp is not a whole number of seconds: {stamp!r}") from None
    age = (time.time() if now is None else now) - timestamp
    if age > tolerance:
        raise WebhookVerificationError(f"the delivery is too old ({int(age)} s; {tolerance} s allowed)")
    if -age > tolerance:
        raise WebhookVerificationError(f"the delivery's timestamp is {int(-age)} s in the future")
    expected = base64.b64decode(sign_webhook(key, msg_id, timestamp, raw)[len("v1,") :])
    matched = False
    for candidate in signatures.split(" "):
        version, _, encoded = candidate.partition(",")
        if version != "v1" or not encoded:
            continue
        try:
            given = base64.b64decode(encoded, validate=True)
        except (binascii.Error, ValueError):
            continue
        # Every candidate is compared, so the time taken says nothing of which one matched.
        matched = hmac.compare_digest(expected, given) or matched
    if not matched:
        raise WebhookVerificationError("no v1 signature in webhook-signature matches the body")
    try:
        payload = json.loads(raw)
    except ValueError:
        raise WebhookVerificationError("the signed body is not JSON") from None
    if not isinstance(payload, dict):
        raise WebhookVerificationError("the signed body is not a JSON object")
    return payload
