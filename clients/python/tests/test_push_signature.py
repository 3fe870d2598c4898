"""The push signature helper agrees with errand's signer and refuses the rest."""

from errand_worker.push import sign, verify_signature

# Computed by errand's own signer (`jobs/push.rs`, its unit test) and by
# `printf '1700000000.{"a":1}' | openssl dgst -sha256 -hmac secret`.
ERRANDS = "t=1700000000,v1=49f24e537407743fa4a0242bb63b94b9a47ee99cbbe071ccd8a22550ae411686"
BODY = b'{"a":1}'
AT = 1_700_000_000


def test_errands_signature_is_accepted():
    assert sign("secret", AT, BODY) == ERRANDS
    assert verify_signature("secret", ERRANDS, BODY, now=AT + 10)


def test_a_wrong_signature_is_refused():
    assert not verify_signature("another secret", ERRANDS, BODY, now=AT)
    assert not verify_signature("secret", ERRANDS, b'{"a":2}', now=AT)
    tampered = ERRANDS[:-1] + ("7" if ERRANDS[-1] != "7" else "8")
    assert not verify_signature("secret", tampered, BODY, now=AT)
    assert not verify_signature("secret", ERRANDS.replace("t=1700000000", "t=1700000001"), BODY, now=AT)
    for junk in [None, "", "v1=abc", "t=soon,v1=abc", "t=1700000000"]:
        assert not verify_signature("secret", junk, BODY, now=AT)


def test_an_old_push_is_refused_as_a_replay():
    assert not verify_signature("secret", ERRANDS, BODY, now=AT + 301)
    assert verify_signature("secret", ERRANDS, BODY, now=AT + 301, tolerance=600)
