"""What the tests' local servers (tools/s3_server.py, gcs_server.py, azurite_server.py, and the REST
and PostgreSQL fixtures) share: a free loopback port, waiting for a server process to listen, and
stopping one."""
import socket
import subprocess
import time


def free_port() -> int:
    """A loopback port no one listens on now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_listening(port: int, proc: subprocess.Popen, what: str, timeout: float = 60) -> None:
    """Return once ``port`` accepts connections; raise, naming ``what``, if ``proc`` exits first or
    ``timeout`` seconds pass."""
    deadline = time.time() + timeout
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return
        except OSError:
            if time.time() > deadline or proc.poll() is not None:
                raise RuntimeError(f"{what} did not start")
            time.sleep(0.05)


def stop(proc: subprocess.Popen) -> None:
    """Terminate ``proc``, killing it if it has not ended within ten seconds."""
    proc.terminate()
    try:
        proc.wait(10)
    except subprocess.TimeoutExpired:
        proc.kill()
