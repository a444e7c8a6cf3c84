"""(j) The REST catalog: commits per second through ``icefloe serve`` (a process of its own, on the
loopback address), with authentication (``--auth``: each client signs in with OAuth2 client
credentials and every request's token is checked) and without, by 4 concurrent clients.

Each client commits ``set-properties`` updates to one shared table, each a new metadata version;
a commit the server could not land after its own retries (409) is sent again, as a client would.
At the end every client's every property must be in the table's metadata: nothing lost.
"""
from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import threading
import time

CLIENTS = 4


def _wait(uri: str, proc) -> None:
    import requests

    for _ in range(300):
        if proc.poll() is not None:
            raise RuntimeError(f"icefloe serve exited: {proc.stderr.read()}")
        try:
            requests.get(f"{uri}/v1/config", timeout=2)
            return
        except requests.ConnectionError:
            time.sleep(0.1)
    raise RuntimeError("icefloe serve did not start")


def _run(work: str, commits: int, auth: bool) -> dict:
    import requests

    import icefloe
    from icefloe.rest.auth import hash_secret
    from tools.local_servers import free_port

    wh = os.path.join(work, f"rest-{'auth' if auth else 'open'}")
    cat = icefloe.Catalog(wh)
    cat.create_namespace("db")
    cat.create_table("db.t", "id bigint")
    port = free_port()
    args = [sys.executable, "-m", "icefloe.cli", "--warehouse", wh, "serve", "--port", str(port)]
    if auth:
        path = os.path.join(work, "auth.yaml")
        with open(path, "w") as f:
            f.write(f"principals:\n  bench: {{secret: '{hash_secret('bench-secret')}', grants: {{db: [write]}}}}\n")
        args += ["--auth", path]
    proc = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    uri = f"http://127.0.0.1:{port}"
    try:
        _wait(uri, proc)
        sessions = []
        for _ in range(CLIENTS):
            s = requests.Session()
            if auth:
                r = s.post(f"{uri}/v1/oauth/tokens", data={"grant_type": "client_credentials", "client_id": "bench",
                                                           "client_secret": "bench-secret", "scope": "catalog"})
                s.headers["Authorization"] = f"Bearer {r.json()['access_token']}"
            sessions.append(s)
        resent = [0] * CLIENTS
        errors: list = []

        def client(i: int) -> None:
            s = sessions[i]
            for k in range(commits):
                body = {"requirements": [], "updates": [{"action": "set-properties", "updates": {f"c{i}-{k}": "1"}}]}
                while True:
                    r = s.post(f"{uri}/v1/namespaces/db/tables/t", json=body, timeout=120)
                    if r.status_code == 200:
                        break
                    if r.status_code != 409:
                        errors.append(f"HTTP {r.status_code}: {r.text[:200]}")
                        return
                    resent[i] += 1
        threads = [threading.Thread(target=client, args=(i,)) for i in range(CLIENTS)]
        t0 = time.perf_counter()
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        elapsed = time.perf_counter() - t0
        props = cat.load_table("db.t").properties
        lost = [f"c{i}-{k}" for i in range(CLIENTS) for k in range(commits) if f"c{i}-{k}" not in props]
        return {"commits": CLIENTS * commits, "seconds": elapsed, "commits_per_s": CLIENTS * commits / elapsed,
                "resent_after_409": sum(resent), "lost": len(lost), "errors": errors[:3]}
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def bench_rest(commits_per_client: int, work: str) -> dict:
    """Commits per second with and without authentication (see the module doc)."""
    out = {"clients": CLIENTS, "commits_per_client": commits_per_client}
    with tempfile.TemporaryDirectory(dir=work) as tmp:
        for auth in (False, True):
            out["auth" if auth else "no_auth"] = _run(tmp, commits_per_client, auth)
    out["auth_over_no_auth"] = out["auth"]["commits_per_s"] / out["no_auth"]["commits_per_s"]
    return out


def report_lines(res: dict) -> list:
    lines = [f"(j) REST catalog commits, {res['clients']} concurrent clients x {res['commits_per_client']} commits"]
    for key, label in (("no_auth", "without auth"), ("auth", "with auth")):
        r = res[key]
        lines.append(f"    {label:13s} {r['commits_per_s']:7.1f} commits/s ({r['commits']} in {r['seconds']:.1f} s; "
                     f"{r['resent_after_409']} resent after 409; lost: {r['lost']}"
                     + (f"; errors: {r['errors']}" if r["errors"] else "") + ")")
    lines.append(f"    with / without auth: {res['auth_over_no_auth']:.2f}")
    return lines
