"""A webhook endpoint for benchmarks: answers every request 204 at once,
over keep-alive connections, and prints how many it answered when stopped
(SIGTERM). Prints its port first. Standard library only: asyncio, one
thread (it must not take a core from what it measures)."""

import asyncio
import signal
import sys

answered = 0


async def serve(reader, writer):
    global answered
    try:
        while True:
            head = await reader.readuntil(b"\r\n\r\n")
            length = 0
            for line in head.split(b"\r\n"):
                name, _, value = line.partition(b":")
                if name.strip().lower() == b"content-length":
                    length = int(value.strip())
            if length:
                await reader.readexactly(length)
            writer.write(b"HTTP/1.1 204 No Content\r\n\r\n")
            answered += 1
            await writer.drain()
    except (asyncio.IncompleteReadError, ConnectionError):
        pass
    finally:
        writer.close()


async def main():
    server = await asyncio.start_server(serve, "127.0.0.1", 0)
    print(server.sockets[0].getsockname()[1], flush=True)
    stop = asyncio.Event()
    asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, stop.set)
    async with server:
        await stop.wait()
    print(f"answered={answered}", file=sys.stderr, flush=True)


asyncio.run(main())
