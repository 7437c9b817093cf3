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
    if os.path.exists(JOB):
        os.remove(JOB)
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

    shutil.copy("/usr/share/doc/silt/examples/sensor-demo.yaml", JOB)
    os.chmod(JOB, 0o644)
    # The unit's user, working directory and command line; the demo job's
    # relative paths land in the state directory.
    runuser = shutil.which("runuser", path="/usr/sbin:/sbin:/usr/bin:/bin")
    run = subprocess.run([runuser, "-u", service["User"], "--"] + argv, cwd=workdir,
                         capture_output=True, text=True, timeout=600,
                         env={"PATH": "/usr/bin:/bin", "SILT_DEMO_TOTAL_ROWS": "5000"})
    assert run.returncode == 0, run.stderr

    table = os.path.join(workdir, "silt-demo", "table")
    assert os.stat(table).st_uid == user.pw_uid
    rows = DeltaTable(table).to_pyarrow_table()
    assert rows.num_rows == 5000
    assert set(rows.column("device_id").to_pylist()) and rows.column("device_id").null_count == 0

    os.remove(JOB)
    sh("dpkg", "--remove", "silt")
    assert not os.path.exists("/usr/bin/silt") and not os.path.exists(UNIT)
    assert os.path.isdir("/var/lib/silt")  # remove keeps data, purge does not
    sh("dpkg", "--purge", "silt")
    assert not installed()
    assert not os.path.exists("/var/lib/silt")
    assert not os.path.exists("/etc/silt")
    with pytest.raises(KeyError):
        pwd.getpwnam("silt")
