"""A throwaway MinIO server on 127.0.0.1 for the S3 integration tests.

The server binary is built by scripts/setup-minio.sh into
<repo>/.cache/minio/bin/minio ($SILT_MINIO_BIN overrides). MinIO listens on a
random free loopback port with a temporary data directory and fixed test
credentials; `start()` waits until it answers, creates the test bucket and
returns a MinioServer; `stop()` kills it and removes the data.

Buckets are created with a SigV4-signed PUT written here (stdlib only) so the
fixture does not depend on the code under test.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import hmac
import os
import shutil
import socket
import subprocess
import tempfile
import time
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import parse_qsl, quote

REPO = Path(__file__).resolve().parents[2]
ACCESS_KEY = "silt-test-access"
SECRET_KEY = "silt-test-secret-0123456789"
REGION = "us-east-1"


def _pinned_version() -> str:
    """The MinIO module version scripts/setup-minio.sh builds (from its stamp)."""
    stamp = REPO / ".cache" / "minio" / "bin" / ".version"
    return stamp.read_text().strip() if stamp.is_file() else "(not built)"


MINIO_VERSION_NOTE = f"github.com/minio/minio@{_pinned_version()}"


def minio_binary() -> Path:
    env = os.environ.get("SILT_MINIO_BIN")
    return Path(env) if env else REPO / ".cache" / "minio" / "bin" / "minio"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


# SSL contexts of TLS servers started by start(certs_dir=...), by endpoint:
# the module's own requests trust the test CA of that server only.
_SSL_CONTEXTS: dict = {}


def _sign(key: bytes, msg: str) -> bytes:
    return hmac.new(key, msg.encode(), hashlib.sha256).digest()


def signed_request(endpoint: str, method: str, path: str, body: bytes = b"",
                   access_key: str = ACCESS_KEY, secret_key: str = SECRET_KEY):
    """Sends one path-style SigV4 request; returns (status, body bytes)."""
    now = dt.datetime.now(dt.timezone.utc)
    amz_date = now.strftime("%Y%m%dT%H%M%SZ")
    date = amz_date[:8]
    host = endpoint.split("://", 1)[1]
    path, _, raw_query = path.partition("?")
    pairs = sorted((quote(k, safe="-_.~"), quote(v, safe="-_.~"))
                   for k, v in parse_qsl(raw_query, keep_blank_values=True))
    query = "&".join(f"{k}={v}" for k, v in pairs)
    payload_hash = hashlib.sha256(body).hexdigest()
    headers = {"host": host, "x-amz-content-sha256": payload_hash, "x-amz-date": amz_date}
    signed = ";".join(sorted(headers))
    canonical = "\n".join([method, path, query,
                           "".join(f"{k}:{headers[k]}\n" for k in sorted(headers)),
                           signed, payload_hash])
    scope = f"{date}/{REGION}/s3/aws4_request"
    to_sign = "\n".join(["AWS4-HMAC-SHA256", amz_date, scope,
                         hashlib.sha256(canonical.encode()).hexdigest()])
    key = _sign(_sign(_sign(_sign(("AWS4" + secret_key).encode(), date), REGION), "s3"),
                "aws4_request")
    signature = hmac.new(key, to_sign.encode(), hashlib.sha256).hexdigest()
    url = endpoint + path + ("?" + query if query else "")
    request = urllib.request.Request(url, data=body or None, method=method)
    for k, v in headers.items():
        if k != "host":
            request.add_header(k, v)
    request.add_header("Authorization",
                       f"AWS4-HMAC-SHA256 Credential={access_key}/{scope}, "
                       f"SignedHeaders={signed}, Signature={signature}")
    try:
        with urllib.request.urlopen(request, timeout=10,
                                    context=_SSL_CONTEXTS.get(endpoint)) as response:
            return response.status, response.read()
    except urllib.error.HTTPError as e:
        return e.code, e.read()


def list_keys(endpoint: str, bucket: str, prefix: str) -> dict:
    """{key: size} of every object under `prefix` (ListObjectsV2, all pages)."""
    import re
    out = {}
    token = None
    while True:
        query = f"list-type=2&max-keys=1000&prefix={quote(prefix, safe='')}"
        if token:
            query += f"&continuation-token={quote(token, safe='')}"
        status, body = signed_request(endpoint, "GET", f"/{bucket}?{query}")
        if status != 200:
            raise RuntimeError(f"listing {bucket}/{prefix}: HTTP {status} {body[:300]!r}")
        text = body.decode()
        for contents in re.findall(r"<Contents>(.*?)</Contents>", text, re.S):
            key = _xml_unescape(re.search(r"<Key>(.*?)</Key>", contents, re.S).group(1))
            out[key] = int(re.search(r"<Size>(\d+)</Size>", contents).group(1))
        if "<IsTruncated>true</IsTruncated>" not in text:
            return out
        token = _xml_unescape(
            re.search(r"<NextContinuationToken>(.*?)</NextContinuationToken>", text).group(1))


def get_object(endpoint: str, bucket: str, key: str) -> bytes:
    status, body = signed_request(endpoint, "GET", f"/{bucket}/{quote(key, safe='/-_.~')}")
    if status != 200:
        raise FileNotFoundError(f"s3://{bucket}/{key}: HTTP {status} {body[:200]!r}")
    return body


def multipart_uploads(endpoint: str, bucket: str, prefix: str = "") -> list:
    """Keys of unfinished multipart uploads (ListMultipartUploads)."""
    import re
    query = "uploads=" + (f"&prefix={quote(prefix, safe='')}" if prefix else "")
    status, body = signed_request(endpoint, "GET", f"/{bucket}?{query}")
    if status != 200:
        raise RuntimeError(f"listing uploads of {bucket}: HTTP {status} {body[:300]!r}")
    uploads = re.findall(r"<Upload>(.*?)</Upload>", body.decode(), re.S)
    return [_xml_unescape(re.search(r"<Key>(.*?)</Key>", u, re.S).group(1)) for u in uploads]


def _xml_unescape(text: str) -> str:
    import html
    return html.unescape(text)


@dataclass
class MinioServer:
    endpoint: str
    bucket: str
    access_key: str
    secret_key: str
    process: subprocess.Popen
    data_dir: str
    log_path: Path
    argv: list | None = None
    process_env: dict | None = None

    def env(self) -> dict:
        """Environment for silt and the fs test binary to reach this server."""
        return {
            "AWS_ACCESS_KEY_ID": self.access_key,
            "AWS_SECRET_ACCESS_KEY": self.secret_key,
            "AWS_REGION": REGION,
            "AWS_ENDPOINT_URL": self.endpoint,
        }

    def storage_options(self) -> dict:
        """deltalake (delta-rs) storage options for this server."""
        return {
            "AWS_ENDPOINT_URL": self.endpoint,
            "AWS_ACCESS_KEY_ID": self.access_key,
            "AWS_SECRET_ACCESS_KEY": self.secret_key,
            "AWS_REGION": REGION,
            "AWS_ALLOW_HTTP": "true",
            "AWS_S3_ALLOW_UNSAFE_RENAME": "true",
        }

    def pyarrow_fs(self, endpoint: str | None = None):
        """pyarrow's own S3 client for this server (a reader independent of
        silt and of delta-rs)."""
        from pyarrow import fs
        e = endpoint or self.endpoint
        return fs.S3FileSystem(access_key=self.access_key, secret_key=self.secret_key,
                               region=REGION, scheme="http", endpoint_override=e.split("://", 1)[1],
                               allow_bucket_creation=False)

    def list_keys(self, prefix: str) -> dict:
        return list_keys(self.endpoint, self.bucket, prefix)

    def get_object(self, key: str) -> bytes:
        return get_object(self.endpoint, self.bucket, key)

    def multipart_uploads(self, prefix: str = "") -> list:
        return multipart_uploads(self.endpoint, self.bucket, prefix)

    def create_bucket(self, name: str) -> None:
        status, body = signed_request(self.endpoint, "PUT", "/" + name)
        if status not in (200, 409):
            raise RuntimeError(f"creating bucket {name}: HTTP {status} {body[:300]!r}")

    def restart(self, down_seconds: float, timeout: float = 60.0) -> None:
        """Stops the server, keeps it down for `down_seconds` (connections
        to its port are refused) and starts it again on the same port and
        data, returning once it is ready."""
        self._terminate()
        time.sleep(down_seconds)
        with open(self.log_path, "ab") as log:
            self.process = subprocess.Popen(self.argv, stdout=log, stderr=subprocess.STDOUT,
                                            env=self.process_env)
        _wait_ready(self, timeout)

    def _terminate(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        shutil.rmtree(self.data_dir, ignore_errors=True)


def _wait_ready(server: MinioServer, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    context = _SSL_CONTEXTS.get(server.endpoint)
    while True:
        if server.process.poll() is not None:
            text = server.log_path.read_text(errors="replace")
            shutil.rmtree(server.data_dir, ignore_errors=True)
            raise RuntimeError(f"MinIO exited with {server.process.returncode}:\n{text}")
        try:
            with urllib.request.urlopen(f"{server.endpoint}/minio/health/ready", timeout=2,
                                        context=context) as r:
                if r.status == 200:
                    return
        except (urllib.error.URLError, ConnectionError, OSError):
            pass
        if time.monotonic() > deadline:
            server.stop()
            raise TimeoutError(f"MinIO did not answer on {server.endpoint} in {timeout} s")
        time.sleep(0.2)


def start(bucket: str = "silt-test", timeout: float = 60.0,
          certs_dir: Path | None = None, ca_file: Path | None = None) -> MinioServer:
    """A MinIO server on loopback; over https when `certs_dir` holds
    public.crt/private.key (MinIO's layout), trusted through `ca_file`."""
    binary = minio_binary()
    if not binary.is_file():
        raise FileNotFoundError(f"MinIO server not found at {binary}: run scripts/setup-minio.sh")
    data_dir = tempfile.mkdtemp(prefix="silt-minio-")
    port, console_port = _free_port(), _free_port()
    env = dict(os.environ)
    env.update({
        "MINIO_ROOT_USER": ACCESS_KEY,
        "MINIO_ROOT_PASSWORD": SECRET_KEY,
        "MINIO_BROWSER": "off",
        "MINIO_UPDATE": "off",
        "MINIO_CI_CD": "1",
        "HOME": data_dir,  # MinIO writes ~/.minio; keep it in the temp dir
    })
    log_path = Path(data_dir) / "minio.log"
    log = open(log_path, "wb")
    tls = ["--certs-dir", str(certs_dir)] if certs_dir else []
    argv = [str(binary), "server", "--quiet", "--address", f"127.0.0.1:{port}",
            "--console-address", f"127.0.0.1:{console_port}", *tls, str(Path(data_dir) / "data")]
    process = subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT, env=env)
    log.close()
    scheme = "https" if certs_dir else "http"
    server = MinioServer(f"{scheme}://127.0.0.1:{port}", bucket, ACCESS_KEY, SECRET_KEY, process,
                         data_dir, log_path, argv, env)
    if certs_dir:
        import ssl
        _SSL_CONTEXTS[server.endpoint] = ssl.create_default_context(cafile=str(ca_file))
    deadline = time.monotonic() + timeout
    _wait_ready(server, timeout)
    # "ready" can precede the end of initialization by a moment (503
    # XMinioServerNotInitialized); retry the bucket until the deadline.
    while True:
        try:
            server.create_bucket(bucket)
            return server
        except RuntimeError:
            if time.monotonic() > deadline:
                server.stop()
                raise
            time.sleep(0.2)


def server_fixture():
    """Body of the test files' session fixture: a running server, or a skip
    when MinIO has not been built."""
    import pytest
    if not minio_binary().is_file():
        pytest.skip(f"MinIO not built at {minio_binary()}: run scripts/setup-minio.sh")
    server = start()
    try:
        yield server
    finally:
        server.stop()


def job_storage(server: MinioServer, endpoint: str | None = None, **extra) -> dict:
    """The job file's `storage.s3` section for `server` (or a proxy in front
    of it at `endpoint`)."""
    settings = {"endpoint": endpoint or server.endpoint, "accessKey": server.access_key,
                "secretKey": server.secret_key, "pathStyleAccess": True}
    settings.update(extra)
    return {"s3": settings}


def clean_env() -> dict:
    """silt's environment without AWS variables, so only the job file counts."""
    return {k: "" for k in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN",
                            "AWS_ENDPOINT_URL", "AWS_ENDPOINT_URL_S3", "AWS_PROFILE",
                            "AWS_REGION", "AWS_DEFAULT_REGION")} | {"HOME": "/nonexistent"}


# --------------------------------------------------------------------------
# Delta tables and streaming checkpoints on the server, read with this
# module's own signed requests (independent of silt).


def delta_commits(server: MinioServer, table_key: str) -> dict:
    """{version: [actions]} of every _delta_log/NNN.json under `table_key`
    ("t-1/delta/x", no bucket). Raises on a commit file that is not complete
    JSON lines (a reader must never see a half-written commit)."""
    import json
    import re
    out = {}
    for key in server.list_keys(table_key + "/_delta_log/"):
        m = re.fullmatch(r".*/_delta_log/(\d{20})\.json", key)
        if not m:
            continue
        text = server.get_object(key).decode()
        assert text.endswith("\n") or text.count("\n") == 0, f"{key} is cut short"
        out[int(m.group(1))] = [json.loads(line) for line in text.splitlines() if line.strip()]
    return dict(sorted(out.items()))


def checkpoint_batches(server: MinioServer, checkpoint_key: str, kind: str) -> list:
    """Batch ids with a file in <checkpoint>/offsets or /commits."""
    keys = server.list_keys(f"{checkpoint_key}/{kind}/")
    names = [k.rsplit("/", 1)[1] for k in keys]
    return sorted(int(n) for n in names if n.isdigit())


def checkpoint_query_id(server: MinioServer, checkpoint_key: str) -> str:
    import json
    return json.loads(server.get_object(checkpoint_key + "/metadata").decode().splitlines()[0])["id"]


def duckdb_over_s3(server: MinioServer, table_key: str, sql: str):
    """Runs `sql` in DuckDB with `t` = the Delta table at s3://bucket/table_key,
    read by DuckDB itself: its delta extension (delta_scan) over its httpfs S3
    client, both loaded from their PyPI packages (helpers.duckdb_connect)."""
    from helpers import duckdb_connect
    con = duckdb_connect("httpfs", "delta")
    try:
        host = server.endpoint.split("://", 1)[1]
        con.execute(
            "CREATE SECRET silt_minio (TYPE s3, KEY_ID ?, SECRET ?, REGION ?, ENDPOINT ?, "
            "URL_STYLE 'path', USE_SSL false)",
            [server.access_key, server.secret_key, REGION, host])
        con.execute(f"CREATE VIEW t AS SELECT * FROM delta_scan('s3://{server.bucket}/{table_key}')")
        return con.execute(sql).fetchall()
    finally:
        con.close()
