"""The amd64 .deb: installs with dpkg -i, runs a job the way silt@.service
does, and purges without leaving anything behind.

Run by `make test-deb` as root (it installs into /usr and creates the
system user `silt`), with SILT_DEB naming the package. systemd is not
running in the build containers, so the job runs through the installed
unit's ExecStart line, as its User= in its WorkingDirectory=; the table it
writes is read back with delta-rs.
"""

import configparser
import os
import pwd
import shlex
import shutil
import subprocess

import pytest
from deltalake import DeltaTable

UNIT = "/lib/systemd/system/silt@.service"
JOB = "/etc/silt/pkgtest.yaml"
ENV_FILE = "/etc/silt/pkgtest.env"


def sh(*cmd, **kw):
    return subprocess.run(cmd, check=True, capture_output=True, text=True, **kw)


def installed():
    r = subprocess.run(["dpkg-query", "-W", "-f=${Status}", "silt"], capture_output=True, text=True)
    return "install ok installed" in r.stdout


def unit_service_section():
    # systemd unit syntax is close enough to INI for the keys read here.
    parser = configparser.ConfigParser(interpolation=None, strict=False)
    parser.optionxform = str
    parser.read(UNIT)
    return parser["Service"]


@pytest.fixture
def deb():
    path = os.environ.get("SILT_DEB")
    if not path:
        pytest.skip("SILT_DEB is not set (make test-deb sets it)")
    if os.geteuid() != 0:
        pytest.skip("installing a .deb needs root")
    if installed():
        sh("dpkg", "--purge", "silt")
    yield path
    for f in (JOB, ENV_FILE):
        if os.path.exists(f):
            os.remove(f)
    if installed():
        subprocess.run(["dpkg", "--purge", "silt"], capture_output=True)


def test_deb_installs_runs_a_job_as_the_unit_does_and_purges(deb):
    sh("dpkg", "-i", deb)
    assert installed()
    assert os.access("/usr/bin/silt", os.X_OK)
    assert "linux/amd64" in sh("/usr/bin/silt", "--version").stdout
    user = pwd.getpwnam("silt")
    assert user.pw_uid != 0 and user.pw_dir == "/var/lib/silt"

    service = unit_service_section()
    assert service["User"] == "silt" and service["Restart"] == "on-failure"
    assert service["StandardOutput"] == "journal"
    workdir = service["WorkingDirectory"]
    argv = [a.replace("%i", "pkgtest") for a in shlex.split(service["ExecStart"])]
    assert argv[-1] == JOB
    # The optional environment file ("-" prefix), read by systemd as root.
    assert service["EnvironmentFile"].replace("%i", "pkgtest") == "-" + ENV_FILE

    shutil.copy("/usr/share/doc/silt/examples/sensor-demo.yaml", JOB)
    os.chmod(JOB, 0o644)
    with open(ENV_FILE, "w") as f:
        f.write("# read by systemd before it drops to User=\nSILT_DEMO_TOTAL_ROWS=5000\n")
    os.chmod(ENV_FILE, 0o600)
    env = {"PATH": "/usr/bin:/bin"}
    for line in open(ENV_FILE):
        if line.strip() and not line.startswith("#"):
            key, value = line.strip().split("=", 1)
            env[key] = value
    # The unit's user, working directory, environment and command line; the
    # demo job's relative paths land in the state directory.
    runuser = shutil.which("runuser", path="/usr/sbin:/sbin:/usr/bin:/bin")
    run = subprocess.run([runuser, "-u", service["User"], "--"] + argv, cwd=workdir,
                         capture_output=True, text=True, timeout=600, env=env)
    assert run.returncode == 0, run.stderr

    table = os.path.join(workdir, "silt-demo", "table")
    assert os.stat(table).st_uid == user.pw_uid
    rows = DeltaTable(table).to_pyarrow_table()
    assert rows.num_rows == 5000
    assert set(rows.column("device_id").to_pylist()) and rows.column("device_id").null_count == 0

    os.remove(JOB)
    os.remove(ENV_FILE)
    sh("dpkg", "--remove", "silt")
    assert not os.path.exists("/usr/bin/silt") and not os.path.exists(UNIT)
    assert os.path.isdir("/var/lib/silt")  # remove keeps data, purge does not
    sh("dpkg", "--purge", "silt")
    assert not installed()
    assert not os.path.exists("/var/lib/silt")
    assert not os.path.exists("/etc/silt")
    with pytest.raises(KeyError):
        pwd.getpwnam("silt")
