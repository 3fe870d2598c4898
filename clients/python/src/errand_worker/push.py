"""Checking errand's pushes, for apps that run a `handler = "http"` job type.

errand POSTs each attempt of such a job to the app, signed as Stripe signs
webhooks: the header ``Errand-Signature: t=<unix seconds>,v1=<hex>`` where
``<hex>`` is HMAC-SHA256 of ``"<t>.<body>"`` under the type's
``signing_secret``. Check it on the raw body before trusting anything in it::

    from errand_worker.push import verify_signature

    if not verify_signature(SECRET, request.headers["Errand-Signature"], request.body):
        return 401
"""

import hashlib
import hmac
import time
from typing import Optional, Union

#: Pushes older (or newer) than this many seconds are refused: a replayed one
#: carries its old timestamp, which the signature covers.
DEFAULT_TOLERANCE = 300


def sign(secret: Union[str, bytes], timestamp: int, body: bytes) -> str:
    """The header value errand sends for ``body`` at ``timestamp``."""
    key = secret.encode() if isinstance(secret, str) else secret
    digest = hmac.new(key, f"{timestamp}.".encode() + body, hashlib.sha256).hexdigest()
    return f"t={timestamp},v1={digest}"


def verify_signature(
    secret: Union[str, bytes],
    header: Optional[str],
    body: bytes,
    *,
    tolerance: int = DEFAULT_TOLERANCE,
    now: Optional[float] = None,
) -> bool:
    """Whether ``header`` is errand's signature of ``body`` under ``secret``,
    made within ``tolerance`` seconds of ``now``. Compares in constant time."""
    if not header:
        return False
    fields = dict(part.split("=", 1) for part in header.split(",") if "=" in part)
    try:
        timestamp = int(fields.get("t", ""))
    except ValueError:
        return False
    if abs((time.time() if now is None else now) - timestamp) > tolerance:
        return False
    expected = sign(secret, timestamp, body)
    return hmac.compare_digest(expected, f"t={timestamp},v1={fields.get('v1', '')}")
