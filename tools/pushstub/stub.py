"""A push service for errand's Web Push tests, standing in for FCM or Mozilla's.

It plays the browser's side too: each device it is asked for gets its own
P-256 key pair and auth secret, as a browser's PushSubscription has. A message
POSTed to a device's endpoint is checked as a push service and the browser
would: the VAPID token (RFC 8292) must be an ES256 JWT signed by the key in
`k`, for this origin, unexpired; the body is decrypted with the device's keys
(RFC 8291, by http_ece: an implementation independent of errand's).

    GET  /subscription/<device>   the device's PushSubscription.toJSON()
    POST /push/<device>           a message (201), or the answer set below
    POST /answer/<device>/<code>  answer the device's next message with <code>
    GET  /messages                what was received and decrypted, in order
    GET  /refused                 messages that failed a check, and why

Prints its port on stdout once listening. Standard library and the two
packages in requirements.txt only.
"""

import base64
import json
import os
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import http_ece
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.asymmetric.utils import encode_dss_signature

LOCK = threading.Lock()
DEVICES = {}  # name -> (private key, auth secret)
ANSWERS = {}  # name -> [status codes to answer next]
MESSAGES = []
REFUSED = []
ATTEMPTS = {}  # name -> count


def b64(data):
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def unb64(text):
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def device(name):
    with LOCK:
        if name not in DEVICES:
            DEVICES[name] = (ec.generate_private_key(ec.SECP256R1()), os.urandom(16))
        return DEVICES[name]


def check_vapid(header, origin):
    """The claims of a valid VAPID Authorization header, else raises ValueError."""
    if not header.startswith("vapid "):
        raise ValueError(f"not a vapid Authorization: {header[:20]!r}")
    params = dict(part.strip().split("=", 1) for part in header[len("vapid "):].split(","))
    token, k = params["t"], params["k"]
    head, claims, signature = token.split(".")
    if json.loads(unb64(head)).get("alg") != "ES256":
        raise ValueError("the token is not ES256")
    public = ec.EllipticCurvePublicKey.from_encoded_point(ec.SECP256R1(), unb64(k))
    raw = unb64(signature)
    if len(raw) != 64:
        raise ValueError("the signature is not 64 bytes")
    der = encode_dss_signature(int.from_bytes(raw[:32], "big"), int.from_bytes(raw[32:], "big"))
    try:
        public.verify(der, f"{head}.{claims}".encode(), ec.ECDSA(hashes.SHA256()))
    except InvalidSignature:
        raise ValueError("the VAPID signature does not verify with k")
    claims = json.loads(unb64(claims))
    if claims.get("aud") != origin:
        raise ValueError(f"aud is {claims.get('aud')!r}, not {origin!r}")
    if not time.time() < claims.get("exp", 0) <= time.time() + 24 * 3600:
        raise ValueError("exp is not within the next 24 hours")
    if not str(claims.get("sub", "")).startswith(("mailto:", "https:")):
        raise ValueError("sub is not a mailto: or https: URL")
    return claims, k


class Handler(BaseHTTPRequestHandler):
    def log_message(self, *args):
        pass

    def reply(self, code, body=None):
        data = json.dumps(body).encode() if body is not None else b""
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self):
        parts = self.path.strip("/").split("/")
        if parts[0] == "subscription" and len(parts) == 2:
            key, auth = device(parts[1])
            point = key.public_key().public_bytes(
                serialization.Encoding.X962, serialization.PublicFormat.UncompressedPoint
            )
            port = self.server.server_address[1]
            endpoint = f"http://127.0.0.1:{port}/push/{parts[1]}"
            return self.reply(200, {"endpoint": endpoint, "keys": {"p256dh": b64(point), "auth": b64(auth)}})
        with LOCK:
            if parts == ["messages"]:
                return self.reply(200, MESSAGES)
            if parts == ["refused"]:
                return self.reply(200, REFUSED)
            if parts == ["attempts"]:
                return self.reply(200, ATTEMPTS)
        self.reply(404)

    def do_POST(self):
        parts = self.path.strip("/").split("/")
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        if parts[0] == "answer" and len(parts) == 3:
            with LOCK:
                ANSWERS.setdefault(parts[1], []).append(int(parts[2]))
            return self.reply(204)
        if parts[0] != "push" or len(parts) != 2:
            return self.reply(404)
        name = parts[1]
        with LOCK:
            ATTEMPTS[name] = ATTEMPTS.get(name, 0) + 1
            answer = ANSWERS.get(name, []).pop(0) if ANSWERS.get(name) else None
        if answer is not None:
            return self.reply(answer)
        try:
            if self.headers.get("Content-Encoding") != "aes128gcm":
                raise ValueError(f"Content-Encoding is {self.headers.get('Content-Encoding')!r}")
            if not (self.headers.get("TTL") or "").isdigit():
                raise ValueError("no TTL")
            origin = f"http://127.0.0.1:{self.server.server_address[1]}"
            claims, k = check_vapid(self.headers.get("Authorization", ""), origin)
            key, auth = device(name)
            plain = http_ece.decrypt(body, private_key=key, auth_secret=auth, version="aes128gcm")
            message = {
                "device": name,
                "payload": json.loads(plain),
                "ttl": int(self.headers["TTL"]),
                "urgency": self.headers.get("Urgency"),
                "sub": claims["sub"],
                "k": k,
            }
        except Exception as error:  # noqa: BLE001 - every failure is the test's to see
            with LOCK:
                REFUSED.append({"device": name, "error": f"{type(error).__name__}: {error}"})
            return self.reply(400, {"error": str(error)})
        with LOCK:
            MESSAGES.append(message)
        self.send_response(201)
        self.send_header("Location", f"/messages/{len(MESSAGES)}")
        self.send_header("Content-Length", "0")
        self.end_headers()


def main():
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    print(server.server_address[1], flush=True)
    server.serve_forever()


if __name__ == "__main__":
    sys.exit(main())
