"""A real Azure Blob Storage server for tests: Azurite (the npm package pinned in
tools/azurite/package.json, installed into tools/azurite/node_modules by ``make azurite`` or, when
missing, by the first test that needs it) on the loopback address, in memory, started and stopped by
its users. It implements conditional writes (``If-None-Match: *``)."""
import base64
import email.utils
import hashlib
import hmac
import http.client
import os
import shutil
import subprocess
import uuid

from tools.local_servers import free_port, stop, wait_listening

HERE = os.path.dirname(os.path.abspath(__file__))
PACKAGE = os.path.join(HERE, "azurite")
BIN = os.path.join(PACKAGE, "node_modules", ".bin", "azurite-blob")
# Azurite's one built-in account and its key, published in Azurite's documentation (not a secret)
ACCOUNT = "devstoreaccount1"
ACCOUNT_KEY = "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw=="


def install() -> str:
    """Azurite's pinned version into tools/azurite/node_modules (``npm ci`` from the lock file)."""
    if not os.path.exists(BIN):
        npm = shutil.which("npm")
        if npm is None:
            raise RuntimeError("Azurite needs Node.js and npm (install nodejs and npm)")
        subprocess.run([npm, "ci", "--prefix", PACKAGE, "--no-audit", "--no-fund", "--loglevel=error"],
                       check=True, stdout=subprocess.DEVNULL)
    return BIN


class AzuriteServer:
    def __init__(self):
        binary = install()
        self.port = free_port()
        self.endpoint = f"http://127.0.0.1:{self.port}/{ACCOUNT}"
        self.proc = subprocess.Popen(
            [binary, "--blobHost", "127.0.0.1", "--blobPort", str(self.port), "--inMemoryPersistence",
             "--disableTelemetry", "--silent", "--skipApiVersionCheck"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=PACKAGE)
        try:
            wait_listening(self.port, self.proc, "the Azure test server (Azurite)")
        except RuntimeError:
            self.stop()
            raise

    @property
    def properties(self) -> dict:
        """icefloe's (pyiceberg's) names for this server's settings."""
        return {"adls.account-name": ACCOUNT, "adls.account-key": ACCOUNT_KEY,
                "adls.blob-storage-authority": f"127.0.0.1:{self.port}", "adls.blob-storage-scheme": "http"}

    def _request(self, method: str, path: str, query: dict) -> tuple:
        """One Blob service request signed with the account's shared key."""
        headers = {"x-ms-date": email.utils.formatdate(usegmt=True), "x-ms-version": "2021-08-06"}
        canonical = "".join(f"{k}:{v}\n" for k, v in sorted(headers.items()))
        resource = f"/{ACCOUNT}/{ACCOUNT}{path}" + "".join(f"\n{k}:{v}" for k, v in sorted(query.items()))
        to_sign = f"{method}\n" + "\n" * 11 + canonical + resource
        digest = hmac.new(base64.b64decode(ACCOUNT_KEY), to_sign.encode(), hashlib.sha256).digest()
        headers["Authorization"] = f"SharedKey {ACCOUNT}:{base64.b64encode(digest).decode()}"
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=30)
        try:
            conn.request(method, f"/{ACCOUNT}{path}?" + "&".join(f"{k}={v}" for k, v in query.items()),
                         body=b"" if method == "PUT" else None, headers=headers)
            resp = conn.getresponse()
            return resp.status, resp.read()
        finally:
            conn.close()

    def new_container(self) -> str:
        name = f"wh-{uuid.uuid4().hex[:12]}"
        status, body = self._request("PUT", f"/{name}", {"restype": "container"})
        if status != 201:
            raise RuntimeError(f"cannot create the container {name}: {status} {body[:200]!r}")
        return name

    def keys(self, container: str) -> list:
        import obstore
        from obstore.store import AzureStore

        store = AzureStore(container, config={"account_name": ACCOUNT, "account_key": ACCOUNT_KEY,
                                              "endpoint": self.endpoint}, client_options={"allow_http": True})
        return [o["path"] for chunk in obstore.list(store) for o in chunk]

    def stop(self):
        stop(self.proc)
