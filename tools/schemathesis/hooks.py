# Schemathesis hooks for errand's API run (tests/api/contract.rs).
#
# Every generated request gets a fresh Idempotency-Key: the same key sent
# again with other params is rightly refused (422 idempotency_key_reused),
# which schemathesis would otherwise read as a valid request rejected.
import uuid

import schemathesis


@schemathesis.hook
def before_call(context, case, kwargs):
    if case.headers and "Idempotency-Key" in case.headers:
        case.headers["Idempotency-Key"] = f"st-{uuid.uuid4()}"
