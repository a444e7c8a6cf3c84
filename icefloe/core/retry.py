"""The commit retry loop shared by both formats: exponential backoff with jitter."""
from __future__ import annotations

import random
import time
from typing import Callable, Mapping, TypeVar

T = TypeVar("T")


class RetryPolicy:
    def __init__(self, num_retries: int = 4, min_wait_ms: int = 100, max_wait_ms: int = 60_000,
                 total_timeout_ms: int = 1_800_000):
        self.num_retries = num_retries
        self.min_wait_ms = min_wait_ms
        self.max_wait_ms = max_wait_ms
        self.total_timeout_ms = total_timeout_ms

    @staticmethod
    def from_iceberg_properties(props: Mapping[str, str]) -> "RetryPolicy":
        return RetryPolicy(
            int(props.get("commit.retry.num-retries", 4)),
            int(props.get("commit.retry.min-wait-ms", 100)),
            int(props.get("commit.retry.max-wait-ms", 60_000)),
            int(props.get("commit.retry.total-timeout-ms", 1_800_000)),
        )

    def run(self, attempt: Callable[[int], T], retry_on: tuple[type[BaseException], ...]) -> T:
        """Call ``attempt(n)`` for n = 1, 2, ... until it returns or retries run out."""
        start = time.monotonic()
        n = 0
        while True:
            n += 1
            try:
                return attempt(n)
            except retry_on:
                elapsed_ms = (time.monotonic() - start) * 1000
                if n > self.num_retries or elapsed_ms > self.total_timeout_ms:
                    raise
                wait = min(self.max_wait_ms, self.min_wait_ms * (2 ** (n - 1)))
                time.sleep(wait * (0.5 + random.random() / 2) / 1000.0)
