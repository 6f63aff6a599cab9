#!/usr/bin/env python3
"""Two fault_server.py servers that prove their clients run at the same time (no timing involved).

    rendezvous_server.py --root DIR1 --root DIR2 [--timeout SECONDS] [--log FILE]

Serves DIR1 and DIR2 on two ports of 127.0.0.1 and prints "PORT1 PORT2" once both listen. The
first request on each port is held until the other port has received a request: two clients
that run concurrently meet and both proceed; clients that run one after the other never do.
After --timeout seconds (default 30) a held request gets 503 "rendezvous timeout" instead (and
every later request on that port too), so a test that expected concurrency fails instead of
hanging. Every request is logged as fault_server.py logs it, with "port" added.
"""
import argparse
import os
import sys
import threading

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fault_server  # noqa: E402


class RendezvousHandler(fault_server.Handler):
    def handle_request(self, send_body):
        side = self.server.side
        if not side.arrived.is_set():
            side.arrived.set()
            if not side.other.arrived.wait(side.timeout):
                side.timed_out = True
        if side.timed_out:
            self.send_simple(503, "rendezvous timeout\n", {}, send_body)
            return
        super().handle_request(send_body)


class Side:
    def __init__(self, timeout):
        self.arrived = threading.Event()
        self.timeout = timeout
        self.timed_out = False
        self.other = None


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--root", action="append", required=True)
    parser.add_argument("--timeout", type=float, default=30.0)
    parser.add_argument("--log")
    args = parser.parse_args()
    if len(args.root) != 2:
        parser.error("give --root twice")
    sides = [Side(args.timeout), Side(args.timeout)]
    sides[0].other, sides[1].other = sides[1], sides[0]
    servers = []
    for root, side in zip(args.root, sides):
        server = fault_server.Server(("127.0.0.1", 0), RendezvousHandler)
        server.state = fault_server.State(root, {}, args.log)
        server.side = side
        servers.append(server)
    print(" ".join(str(server.server_address[1]) for server in servers), flush=True)
    threads = [threading.Thread(target=s.serve_forever, kwargs={"poll_interval": 0.05},
                                daemon=True) for s in servers]
    for thread in threads:
        thread.start()
    try:
        for thread in threads:
            thread.join()
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    main()
