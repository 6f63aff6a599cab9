#!/usr/bin/env python3
"""A fault-injecting HTTP/1.1 server for the download engine's tests (standard library only).

    fault_server.py --root DIR [--script FILE] [--log FILE]
    fault_server.py --upstream http://127.0.0.1:PORT [--script FILE] [--log FILE]

Serves the files under DIR on 127.0.0.1 (a free port), prints the port on stdout once it is
listening, and appends one JSON line per request to --log: {"method", "path", "query", "range",
"headers", "step", "action", "in_flight", "connection"}, written before the response, so a test that has its
answer has its log line ("action": "forward", "s3_error", "ok_with_error", "drop" or "serve"). "in_flight" counts the requests being answered when this one arrived, itself
included; a request stops counting before the last byte of its answer is sent, so the most
requests in flight the server saw is never more than the client had running at once.
"connection" numbers the connection the request came on (1 for the first accepted, and so on):
requests with one number reused one connection.

--script is a JSON object {"paths": {"/url/path": [step, step, ...]}, "all": [step, ...]}: the
n-th request for a path uses the n-th step (the last step repeats); paths without steps of their
own use the "all" steps, if any. Paths without a script serve the file DIR/path, with Range
support. A step is an object; every key is optional:

  "file": "name"          serve DIR/name instead of DIR/<path>
  "status": 503           answer this status with a short text body (no file)
  "retry_after": "1"      add a Retry-After header
  "headers": {"K": "v"}   add headers
  "redirect": "URL"       answer 302 with Location: URL
  "corrupt": true         same length, different bytes (every byte of the middle 64 flipped)
  "gzip": true            add Content-Encoding: gzip, body unchanged (a .gz served "encoded")
  "encode": "gzip"        compress the body ("gzip" or "deflate", zlib format) and send it with
                          that Content-Encoding, asked for or not; a Range request gets a range
                          of the compressed bytes (206), as a server of precompressed files does
  "content_length": N     announce N as Content-Length, send the real body, then close
  "close_after": N        announce the full length, send N bytes, then close the connection
  "no_length": true       announce no Content-Length (and no chunked encoding): the body ends
                          when the connection closes, as an HTTP/1.0 server sends it; with
                          "close_after", the connection closes after N bytes
  "trickle": [B, S]       send the body B bytes at a time, sleeping S seconds in between
  "stall_after": N        announce the full length, send N bytes, then send nothing more and
                          wait (at most 120 s) for the client to close the connection
  "mark": "FILE"          with "stall_after": create FILE once the N bytes are sent (a test
                          waits for it to know the client has part of the body)
  "range": false          ignore Range: always 200 with the whole file
  "range_status": 416     answer 416 to any Range request
  "wrong_range": true     answer a Range request with 206 starting at byte 0

Proxy mode (--upstream, for an S3 gateway): every request (GET, HEAD, PUT, POST, DELETE) is
forwarded with its method, path and query, headers (Host unchanged: SigV4 signs the Host the
client sent, and the gateway checks the signature against the Host it receives) and body, and the
answer is relayed. The script may then also hold "rules": [{"match": {...}, "steps": [...]}, ...]:
the first rule whose "match" fits a request applies; its n-th request for one path (a key) uses
the n-th step (the last repeats). "match" keys, all optional: "method" ("PUT"), "path_re" and
"query_re" (Python regular expressions searched in the path and in the raw query string). Requests
no rule matches use "paths" and "all" as above; an empty step {} forwards. Steps in proxy mode:

  "s3_error": {"status": 503, "code": "SlowDown"}
                          answer an S3 XML <Error> with that status and code, without forwarding
  "ok_with_error": "InternalError"
                          forward, then answer 200 with an <Error><Code>InternalError</Code> body
                          instead of the gateway's answer (as S3 does for CompleteMultipartUpload
                          and CopyObject)
  "drop": true            read the request, then close the connection without answering (not
                          forwarded)
  "lose_answer": true     forward, then close the connection without relaying the answer (the
                          store carried the request out; the client never learns it)
  "hold": "FILE"          wait until FILE exists, then forward (the log line is written when the
                          request arrives, so a test knows the client is held)
  "set_headers": {"K": "v"}
                          forward, then relay the answer with these headers replaced or added
                          (with "forward" or "hold")
"""
import argparse
import http.client
import gzip
import json
import os
import re
import socket
import sys
import threading
import time
import urllib.parse
import zlib
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class State:
    def __init__(self, root, script, log_path, upstream=None):
        self.root = os.path.realpath(root) if root else None
        self.upstream = upstream  # (host, port) in proxy mode
        self.rules = script.get("rules", [])
        self.paths = script.get("paths", {})
        self.all = script.get("all", [])
        self.counts = {}
        self.in_flight = 0
        self.connections = 0
        self.lock = threading.Lock()
        self.log = open(log_path, "a", buffering=1) if log_path else None

    def next_step(self, method, path, query):
        for number, rule in enumerate(self.rules):
            match = rule.get("match", {})
            if "method" in match and match["method"] != method:
                continue
            if "path_re" in match and not re.search(match["path_re"], path):
                continue
            if "query_re" in match and not re.search(match["query_re"], query):
                continue
            return self.count(("rule", number, path), rule.get("steps", []))
        return self.count(path, self.paths.get(path) or self.all)

    def count(self, counter, steps):
        with self.lock:
            index = self.counts.get(counter, 0)
            self.counts[counter] = index + 1
        if not steps:
            return index, {}
        return index, steps[min(index, len(steps) - 1)]

    def record(self, entry):
        if self.log is None:
            return
        with self.lock:
            self.log.write(json.dumps(entry, sort_keys=True) + "\n")
            self.log.flush()


def parse_range(header, size):
    """Returns the first byte of a "bytes=N-[M]" header, or None."""
    if not header or not header.startswith("bytes="):
        return None
    spec = header[6:].split(",")[0].strip()
    start, _, _end = spec.partition("-")
    if not start.isdigit():
        return None
    return int(start)


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "fault_server/1"

    def log_message(self, format, *args):  # quiet: the JSON log is the record
        pass

    def setup(self):
        super().setup()
        state = self.server.state
        with state.lock:
            state.connections += 1
            self.connection_number = state.connections

    def do_HEAD(self):
        self.answer(send_body=False)

    def do_GET(self):
        self.answer(send_body=True)

    def do_PUT(self):
        self.answer(send_body=True)

    def do_POST(self):
        self.answer(send_body=True)

    def do_DELETE(self):
        self.answer(send_body=True)

    def answer(self, send_body):
        state = self.server.state
        with state.lock:
            state.in_flight += 1
            self.arrived_in_flight = state.in_flight
        self.counted = True
        try:
            self.handle_request(send_body)
        finally:
            self.done()

    def done(self):
        """Stops counting this request as in flight (once)."""
        if self.counted:
            self.counted = False
            with self.server.state.lock:
                self.server.state.in_flight -= 1

    def handle_request(self, send_body):
        state = self.server.state
        path, _, query = self.path.partition("?")
        index, step = state.next_step(self.command, path, query)
        action = "serve"
        if state.upstream is not None:
            action = "forward"
            for kind in ("s3_error", "ok_with_error", "drop", "lose_answer", "hold"):
                if kind in step:
                    action = kind
        state.record({
            "method": self.command,
            "path": path,
            "query": query,
            "range": self.headers.get("Range", ""),
            "headers": {k.lower(): v for k, v in self.headers.items()},
            "step": index,
            "action": action,
            "in_flight": self.arrived_in_flight,
            "connection": self.connection_number,
        })
        if state.upstream is not None:
            self.proxy(step, action, path, send_body)
            return
        if self.command not in ("GET", "HEAD"):
            self.send_simple(501, "not implemented\n", {}, send_body)
            return
        extra = dict(step.get("headers", {}))
        if "retry_after" in step:
            extra["Retry-After"] = str(step["retry_after"])
        if "redirect" in step:
            self.send_simple(302, "redirect\n", {"Location": step["redirect"], **extra}, send_body)
            return
        if "status" in step and step["status"] not in (200, 206):
            self.send_simple(int(step["status"]), "status %d\n" % step["status"], extra,
                             send_body)
            return
        name = step.get("file", path.lstrip("/"))
        full = os.path.realpath(os.path.join(state.root, name))
        if not full.startswith(state.root + os.sep) or not os.path.isfile(full):
            self.send_simple(404, "not found\n", extra, send_body)
            return
        with open(full, "rb") as f:
            body = f.read()
        size = len(body)
        if step.get("corrupt") and size:
            middle = size // 2
            lo, hi = max(0, middle - 32), min(size, middle + 32)
            body = body[:lo] + bytes(b ^ 0xFF for b in body[lo:hi]) + body[hi:]
        encoding = step.get("encode")
        if encoding == "gzip":
            body = gzip.compress(body, mtime=0)
        elif encoding == "deflate":
            body = zlib.compress(body)
        elif encoding is not None:
            raise ValueError("unknown encode: %r" % encoding)
        if encoding is not None:
            extra["Content-Encoding"] = encoding
            size = len(body)
        status = 200
        start = parse_range(self.headers.get("Range"), size)
        if start is not None and step.get("range", True):
            if step.get("range_status") == 416 or start >= size:
                self.send_simple(416, "range not satisfiable\n",
                                 {"Content-Range": "bytes */%d" % size, **extra}, send_body)
                return
            if step.get("wrong_range"):
                start = 0
            status = 206
            extra["Content-Range"] = "bytes %d-%d/%d" % (start, size - 1, size)
            body = body[start:]
        if step.get("gzip"):
            extra["Content-Encoding"] = "gzip"
        announced = step.get("content_length", len(body))
        close_after = step.get("close_after")
        no_length = bool(step.get("no_length"))
        lying = "content_length" in step or close_after is not None or no_length
        self.send_response(status)
        self.send_header("Content-Type", "application/octet-stream")
        if not no_length:
            self.send_header("Content-Length", str(announced))
        if status == 200:
            self.send_header("Accept-Ranges", "bytes")
        for key, value in extra.items():
            self.send_header(key, value)
        if lying:
            self.send_header("Connection", "close")
            self.close_connection = True
        if not send_body or not body:
            self.done()
        self.end_headers()
        if not send_body:
            return
        if close_after is not None:
            body = body[:int(close_after)]
        try:
            if "stall_after" in step:
                self.stall(body[:int(step["stall_after"])], step.get("mark"))
                return
            trickle = step.get("trickle")
            if trickle:
                chunk, pause = int(trickle[0]), float(trickle[1])
                for offset in range(0, len(body), chunk):
                    self.wfile.write(body[offset:offset + chunk])
                    self.wfile.flush()
                    time.sleep(pause)
            else:
                self.wfile.write(body[:-1])
                self.wfile.flush()
                self.done()  # before the client can have the whole answer
                self.wfile.write(body[-1:])
            self.wfile.flush()
        except (BrokenPipeError, ConnectionResetError):
            self.close_connection = True
            return
        if lying:
            try:
                self.connection.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass

    # Hop-by-hop headers, and Expect (this server already answered "100 Continue").
    NOT_FORWARDED = {"connection", "keep-alive", "proxy-connection", "te", "trailer",
                     "transfer-encoding", "upgrade", "expect"}

    def proxy(self, step, action, path, send_body):
        """Proxy mode: answers the request as `step` says (see the module docstring)."""
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else b""
        if action == "drop":
            self.hang_up()
            return
        if action == "s3_error":
            error = step["s3_error"]
            self.send_s3_error(int(error.get("status", 503)), error.get("code", "SlowDown"), path,
                               send_body and self.command != "HEAD")
            return
        if action == "hold":
            while not os.path.exists(step["hold"]):
                time.sleep(0.01)
        host, port = self.server.state.upstream
        connection = http.client.HTTPConnection(host, port, timeout=60)
        try:
            connection.putrequest(self.command, self.path, skip_host=True,
                                  skip_accept_encoding=True)
            for key, value in self.headers.items():
                if key.lower() not in self.NOT_FORWARDED:
                    connection.putheader(key, value)
            connection.endheaders(body if body or length else None)
            response = connection.getresponse()
            answer = response.read()
            status, headers = response.status, response.getheaders()
        finally:
            connection.close()
        if action == "ok_with_error":
            self.send_s3_error(200, step["ok_with_error"], path, send_body)
            return
        if action == "lose_answer":
            self.hang_up()
            return
        replaced = {k.lower(): v for k, v in step.get("set_headers", {}).items()}
        if replaced:
            headers = [(k, v) for k, v in headers if k.lower() not in replaced]
            headers += list(step["set_headers"].items())
        self.send_response(status)
        for key, value in headers:
            if key.lower() not in self.NOT_FORWARDED and key.lower() != "content-length":
                self.send_header(key, value)
        if self.command == "HEAD":
            length_header = dict((k.lower(), v) for k, v in headers).get("content-length")
            if length_header is not None:
                self.send_header("Content-Length", length_header)
            self.done()
            self.end_headers()
            return
        self.send_header("Content-Length", str(len(answer)))
        self.done()
        self.end_headers()
        self.wfile.write(answer)

    def stall(self, part, mark):
        """Sends `part`, creates `mark` (if any), then waits for the client to hang up."""
        self.wfile.write(part)
        self.wfile.flush()
        if mark:
            open(mark, "a").close()
        self.close_connection = True
        self.connection.settimeout(120)
        try:
            while self.connection.recv(65536):
                pass
        except OSError:
            pass

    def hang_up(self):
        """Closes the connection without answering."""
        self.close_connection = True
        self.done()
        try:
            self.connection.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass

    def send_s3_error(self, status, code, path, send_body):
        """Answers `status` with an S3 <Error> document naming `code`."""
        text = ('<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>%s</Code>'
                "<Message>injected by fault_server.py</Message><Resource>%s</Resource>"
                "<RequestId>fault-server</RequestId></Error>" % (code, path))
        data = text.encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/xml")
        self.send_header("Content-Length", str(len(data)))
        self.done()
        self.end_headers()
        if send_body:
            self.wfile.write(data)

    def send_simple(self, status, text, headers, send_body):
        data = text.encode()
        self.send_response(status)
        self.send_header("Content-Type", "text/plain")
        self.send_header("Content-Length", str(len(data)))
        for key, value in headers.items():
            self.send_header(key, value)
        if not send_body:
            self.done()
        self.end_headers()
        if send_body:
            self.done()
            self.wfile.write(data)


class Server(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--root")
    parser.add_argument("--upstream", help="proxy mode: forward to this http://HOST:PORT")
    parser.add_argument("--script")
    parser.add_argument("--log")
    args = parser.parse_args()
    if (args.root is None) == (args.upstream is None):
        parser.error("give exactly one of --root and --upstream")
    upstream = None
    if args.upstream:
        parsed = urllib.parse.urlsplit(args.upstream)
        if parsed.scheme != "http" or not parsed.hostname:
            parser.error("--upstream must be http://HOST[:PORT]")
        upstream = (parsed.hostname, parsed.port or 80)
    script = {}
    if args.script:
        with open(args.script) as f:
            script = json.load(f)
    server = Server(("127.0.0.1", 0), Handler)
    server.state = State(args.root, script, args.log, upstream)
    print(server.server_address[1], flush=True)
    try:
        server.serve_forever(poll_interval=0.05)
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    main()
