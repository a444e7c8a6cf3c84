"""A real S3 protocol server for tests and benchmarks: moto's server on the loopback address,
started and stopped by its users (it implements conditional writes, ``If-None-Match: *``)."""
import os
import subprocess
import sys
import time
import urllib.request
import uuid

from tools.local_servers import free_port, stop

ACCESS_KEY = "icefloe-test-key"
SECRET_KEY = "icefloe-test-secret-do-not-show"


class S3Server:
    def __init__(self):
        self.port = free_port()
        self.endpoint = f"http://127.0.0.1:{self.port}"
        env = dict(os.environ, MOTO_ALLOW_NONEXISTENT_REGION="true")
        self.proc = subprocess.Popen([sys.executable, "-m", "moto.server", "-H", "127.0.0.1", "-p", str(self.port)],
                                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
        deadline = time.time() + 60
        while True:
            try:
                urllib.request.urlopen(self.endpoint, timeout=2)
                break
            except Exception:
                if time.time() > deadline or self.proc.poll() is not None:
                    raise RuntimeError("the S3 test server (moto) did not start")
                time.sleep(0.1)

    @property
    def properties(self) -> dict:
        """icefloe's (and pyiceberg's) names for this server's settings."""
        return {"s3.endpoint": self.endpoint, "s3.access-key-id": ACCESS_KEY, "s3.secret-access-key": SECRET_KEY,
                "s3.region": "us-east-1"}

    @property
    def paimon_options(self) -> dict:
        """pypaimon's names for the same settings."""
        return {"fs.s3.endpoint": self.endpoint, "fs.s3.accessKeyId": ACCESS_KEY,
                "fs.s3.accessKeySecret": SECRET_KEY, "fs.s3.region": "us-east-1"}

    def client(self):
        import boto3

        return boto3.client("s3", endpoint_url=self.endpoint, aws_access_key_id=ACCESS_KEY,
                            aws_secret_access_key=SECRET_KEY, region_name="us-east-1")

    def new_bucket(self) -> str:
        name = f"wh-{uuid.uuid4().hex[:12]}"
        self.client().create_bucket(Bucket=name)
        return name

    def keys(self, bucket: str) -> list:
        out, token = [], None
        while True:
            kw = {"Bucket": bucket, **({"ContinuationToken": token} if token else {})}
            page = self.client().list_objects_v2(**kw)
            out += [o["Key"] for o in page.get("Contents", [])]
            if not page.get("IsTruncated"):
                return out
            token = page["NextContinuationToken"]

    def stop(self):
        stop(self.proc)
