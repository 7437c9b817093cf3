"""silt against MinIO over https with a certificate from a private CA (made
here with openssl): `storage.s3.caBundle` and AWS_CA_BUNDLE make silt trust
it, and without them the error names the certificate and the setting."""

import json
import subprocess
import uuid
from pathlib import Path

import pytest

import minio_service
from helpers import (
    READING_SCHEMA,
    assert_same_rows,
    describe,
    expected_reading_row,
    json_file_job,
    reading_record,
    read_with_silt,
    write_input_file,
    write_job,
)

ROWS = 40


def make_certificates(out: Path) -> tuple[Path, Path]:
    """A CA and a server certificate for 127.0.0.1 signed by it, in MinIO's
    certs-dir layout. Returns (certs_dir, ca_pem)."""
    certs = out / "certs"
    certs.mkdir()
    ca_key, ca_pem = out / "ca.key", out / "ca.pem"

    def openssl(*args):
        subprocess.run(["openssl", *args], check=True, capture_output=True)

    openssl("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", ca_key, "-out", ca_pem,
            "-days", "2", "-subj", "/CN=silt test CA",
            "-addext", "basicConstraints=critical,CA:TRUE",
            "-addext", "keyUsage=critical,keyCertSign,cRLSign")
    csr = out / "server.csr"
    openssl("req", "-newkey", "rsa:2048", "-nodes", "-keyout", certs / "private.key",
            "-out", csr, "-subj", "/CN=127.0.0.1")
    ext = out / "server.ext"
    ext.write_text("subjectAltName=IP:127.0.0.1\nbasicConstraints=CA:FALSE\n"
                   "keyUsage=digitalSignature,keyEncipherment\nextendedKeyUsage=serverAuth\n")
    openssl("x509", "-req", "-in", csr, "-CA", ca_pem, "-CAkey", ca_key, "-CAcreateserial",
            "-out", certs / "public.crt", "-days", "2", "-extfile", ext)
    return certs, ca_pem


@pytest.fixture(scope="module")
def tls_minio(tmp_path_factory):
    if not minio_service.minio_binary().is_file():
        pytest.skip(f"MinIO not built at {minio_service.minio_binary()}: "
                    "run scripts/setup-minio.sh")
    certs, ca_pem = make_certificates(tmp_path_factory.mktemp("tls"))
    server = minio_service.start(certs_dir=certs, ca_file=ca_pem)
    server.ca_pem = ca_pem
    yield server
    server.stop()


def tls_job(server, work: Path, **storage) -> Path:
    input_dir = work / "in"
    input_dir.mkdir(exist_ok=True)
    write_input_file(input_dir / "part-000.json",
                     [json.dumps(reading_record(i)) for i in range(ROWS)])
    prefix = f"s3://{server.bucket}/t-{uuid.uuid4().hex[:12]}"
    job = json_file_job("readings", input_dir, f"{prefix}/table", f"{prefix}/cp",
                        schema=READING_SCHEMA,
                        transform=[{"withColumn": {"event_date": "to_date(event_time)"}}])
    job["storage"] = minio_service.job_storage(server, **storage)
    return write_job(work / "job.yaml", job), f"{prefix}/table"


def test_ca_bundle_in_the_job_and_in_the_environment(silt, tls_minio, work):
    assert tls_minio.endpoint.startswith("https://")
    job, table = tls_job(tls_minio, work, caBundle=str(tls_minio.ca_pem))
    proc = silt("run", job, env=minio_service.clean_env())
    assert proc.returncode == 0, describe(proc)
    # silt read finds the CA through AWS_CA_BUNDLE, as the AWS SDKs do.
    env = tls_minio.env() | {"AWS_CA_BUNDLE": str(tls_minio.ca_pem)}
    rows = read_with_silt(lambda *a: silt(*a, env=env), table)
    assert_same_rows(rows, [expected_reading_row(i) for i in range(ROWS)], "silt read", "id")


def test_an_untrusted_certificate_names_the_setting(silt, tls_minio, work):
    job, _ = tls_job(tls_minio, work)
    proc = silt("run", job, env=minio_service.clean_env(), timeout=60)
    assert proc.returncode != 0, describe(proc)
    output = proc.stdout + proc.stderr
    assert "TLS certificate was not accepted" in output, describe(proc)
    assert "storage.s3.caBundle" in output and tls_minio.endpoint in output, describe(proc)


def test_an_unreadable_ca_bundle_is_a_job_error(silt, tls_minio, work):
    job, _ = tls_job(tls_minio, work, caBundle=str(work / "missing.pem"))
    proc = silt("run", job, env=minio_service.clean_env(), timeout=60)
    assert proc.returncode == 2, describe(proc)
    assert "storage.s3.caBundle: cannot read the CA bundle" in proc.stderr, describe(proc)
