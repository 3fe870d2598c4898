"""An OTLP/HTTP receiver that keeps nothing: it reads each export and answers
200, counting requests and bytes, so that a benchmark with traces on pays
errand's side of exporting (spans built, batched, encoded and sent) and not
a collector's. Usage: python3 bench/otlp_sink.py [port=4318]; prints its
counts when stopped (SIGTERM or Ctrl-C)."""

import signal
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

counts = {"requests": 0, "bytes": 0}


class Sink(BaseHTTPRequestHandler):
    def do_POST(self) -> None:  # noqa: N802 (http.server's name)
        length = int(self.headers.get("content-length", "0"))
        counts["bytes"] += len(self.rfile.read(length))
        counts["requests"] += 1
        self.send_response(200)
        self.send_header("content-type", "application/x-protobuf")
        self.send_header("content-length", "0")
        self.end_headers()

    def log_message(self, *args: object) -> None:
        pass


def main() -> None:
    port = int(sys.argv[1]) if len(sys.argv) > 1 else 4318
    server = ThreadingHTTPServer(("127.0.0.1", port), Sink)
    # serve_forever returns once shut down from another thread.
    signal.signal(signal.SIGTERM, lambda *_: threading.Thread(target=server.shutdown).start())
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    print(f"otlp_sink requests={counts['requests']} bytes={counts['bytes']}", flush=True)


if __name__ == "__main__":
    main()
