"""What users see when the S3 set-up is wrong, and where secrets must never
appear.

Each misconfiguration (wrong access key, TLS spoken to a plain-HTTP server,
plain HTTP spoken to a TLS server, a TLS certificate silt does not trust)
fails within seconds with a message naming the endpoint and the cause
(test_s3.py covers a wrong secret key, a missing bucket and an unreachable
endpoint). The secret key and session token appear nowhere: not in silt's
output at debug level (including retry messages, forced by a fault-injecting
proxy), not in any object silt wrote (commitInfo, streaming checkpoint, data
files), and not in the errors of a rejected request.
"""

import asyncio
import json
import random
import ssl
import subprocess
import threading
import time

import pytest

import minio_service
from helpers import describe, json_file_job, write_input_file, write_job
from s3_fault_proxy import FaultProxy

FAST_S = 30  # generous: a hang or minutes of retries is the failure mode


@pytest.fixture(scope="module")
def minio():
    yield from minio_service.server_fixture()


def _job(minio, work, endpoint=None, **storage):
    input_dir = work / "in"
    input_dir.mkdir(exist_ok=True)
    write_input_file(input_dir / "part-000.json",
                     [json.dumps({"id": i, "payload": f"event {i}"}) for i in range(100)])
    prefix = f"err-{random.randrange(1 << 32):08x}"
    job = json_file_job("errors", input_dir, f"s3://{minio.bucket}/{prefix}/table",
                        f"s3://{minio.bucket}/{prefix}/cp", schema="id BIGINT, payload STRING")
    job["storage"] = minio_service.job_storage(minio, endpoint=endpoint, **storage)
    return write_job(work / "job.yaml", job), prefix


def _run_timed(silt, job, **env):
    start = time.monotonic()
    proc = silt("run", job, env=minio_service.clean_env() | env, timeout=120)
    return proc, time.monotonic() - start


class _TlsServer:
    """A loopback TLS server with a fresh self-signed certificate; it never
    gets as far as answering HTTP."""

    def __init__(self, tmp):
        cert, key = tmp / "cert.pem", tmp / "key.pem"
        subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1",
                        "-subj", "/CN=127.0.0.1", "-keyout", str(key), "-out", str(cert)],
                       check=True, capture_output=True)
        self.context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        self.context.load_cert_chain(cert, key)
        ready = threading.Event()

        async def handle(reader, writer):
            try:
                await reader.read(1 << 16)
            except (ConnectionError, ssl.SSLError, OSError):
                pass
            writer.close()

        def run():
            self.loop = asyncio.new_event_loop()
            self.server = self.loop.run_until_complete(
                asyncio.start_server(handle, "127.0.0.1", 0, ssl=self.context))
            self.port = self.server.sockets[0].getsockname()[1]
            ready.set()
            self.loop.run_forever()

        self.thread = threading.Thread(target=run, daemon=True)
        self.thread.start()
        assert ready.wait(10)

    def stop(self):
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(timeout=10)


@pytest.fixture
def tls_server(tmp_path):
    server = _TlsServer(tmp_path)
    yield server
    server.stop()


def test_wrong_access_key_is_named_with_its_source(silt, minio, work):
    job, _ = _job(minio, work, accessKey="no-such-access-key")
    proc, elapsed = _run_timed(silt, job)
    assert proc.returncode != 0, describe(proc)
    out = proc.stdout + proc.stderr
    assert "InvalidAccessKeyId" in out and "'no-such-access-key'" in out, describe(proc)
    assert "storage.s3.accessKey/secretKey" in out and minio.endpoint in out, describe(proc)
    assert minio.secret_key not in out
    assert elapsed < FAST_S, f"took {elapsed:.1f} s"


def test_tls_spoken_to_a_plain_http_server_is_explained(silt, minio, work):
    https = "https://" + minio.endpoint.split("://", 1)[1]
    job, _ = _job(minio, work, endpoint=https)
    proc, elapsed = _run_timed(silt, job)
    assert proc.returncode != 0, describe(proc)
    out = proc.stdout + proc.stderr
    assert "TLS handshake failed" in out and "use an http:// endpoint" in out, describe(proc)
    assert https in out, describe(proc)
    assert elapsed < FAST_S, f"took {elapsed:.1f} s"


def test_plain_http_spoken_to_a_tls_server_is_explained(silt, minio, work, tls_server):
    endpoint = f"http://127.0.0.1:{tls_server.port}"
    job, _ = _job(minio, work, endpoint=endpoint)
    proc, elapsed = _run_timed(silt, job)
    assert proc.returncode != 0, describe(proc)
    out = proc.stdout + proc.stderr
    assert "if the server speaks HTTPS, use an https:// endpoint" in out, describe(proc)
    assert endpoint in out, describe(proc)
    assert elapsed < FAST_S, f"took {elapsed:.1f} s"


def test_untrusted_tls_certificate_is_explained(silt, minio, work, tls_server):
    endpoint = f"https://127.0.0.1:{tls_server.port}"
    job, _ = _job(minio, work, endpoint=endpoint)
    proc, elapsed = _run_timed(silt, job)
    assert proc.returncode != 0, describe(proc)
    out = proc.stdout + proc.stderr
    assert "TLS certificate was not accepted" in out and endpoint in out, describe(proc)
    assert elapsed < FAST_S, f"took {elapsed:.1f} s"


def test_rejected_session_token_is_not_printed(silt, minio, work):
    token = "session-token-" + "z" * 24
    job, _ = _job(minio, work, sessionToken=token)
    proc, _ = _run_timed(silt, job, SILT_LOG_LEVEL="debug")
    assert proc.returncode != 0, describe(proc)
    out = proc.stdout + proc.stderr
    assert token not in out and minio.secret_key not in out, describe(proc)


def test_secret_key_appears_in_no_output_and_no_written_object(silt, minio, work):
    host, port = minio.endpoint.split("://", 1)[1].split(":")
    proxy = FaultProxy(host, int(port), seed=99, error_rate=0.1, drop_before_rate=0.05,
                       drop_after_rate=0.05).start()
    try:
        job, prefix = _job(minio, work, endpoint=proxy.endpoint)
        proc, _ = _run_timed(silt, job, SILT_LOG_LEVEL="debug")
    finally:
        proxy.stop()
    assert proc.returncode == 0, describe(proc)
    out = proc.stdout + proc.stderr
    assert "retrying" in out, "no retry was logged; the proxy injected no fault?"
    assert minio.secret_key not in out
    keys = minio.list_keys(prefix + "/")
    assert any("/_delta_log/" in k for k in keys) and any("/cp/offsets/" in k for k in keys)
    for key in keys:
        body = minio.get_object(key)
        assert minio.secret_key.encode() not in body, f"secret key in s3://{minio.bucket}/{key}"
    log = silt("log", f"s3://{minio.bucket}/{prefix}/table", env=minio.env())
    assert log.returncode == 0 and minio.secret_key not in log.stdout + log.stderr
