"""A ProxyCommand for the tests: `python counting_proxy.py COUNTER PORT` appends one line to COUNTER (one per
TCP connection ssh makes), then relays stdin and stdout to 127.0.0.1:PORT.  A second run that adds no line
reused a connection (ControlMaster).  Only ever connects to 127.0.0.1."""

from __future__ import annotations

import os
import selectors
import socket
import sys


def main(counter: str, port: int) -> None:
    with open(counter, "a") as handle:
        handle.write(f"{os.getpid()}\n")
    with socket.create_connection(("127.0.0.1", port)) as sock:
        selector = selectors.DefaultSelector()
        selector.register(0, selectors.EVENT_READ)
        selector.register(sock, selectors.EVENT_READ)
        while True:
            for key, _ in selector.select():
                if key.fd == 0:
                    data = os.read(0, 65536)
                    if not data:
                        sock.shutdown(socket.SHUT_WR)
                        selector.unregister(0)
                    else:
                        sock.sendall(data)
                else:
                    data = sock.recv(65536)
                    if not data:
                        return
                    view = memoryview(data)
                    while view:
                        view = view[os.write(1, view) :]


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]))
