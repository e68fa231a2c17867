"""A real one-node Slurm cluster for the tests: Debian's munge and Slurm 22.05 daemons, in a temporary folder.

Started as ``scripts/dev.sh test`` installs them (``setup_slurm``): a fresh munge key; ``munged`` as the
``munge`` user on its own socket; a ``slurm.conf`` with ``ProctrackType=proctrack/linuxproc``,
``TaskPlugin=task/none``, ``SelectType=select/cons_tres``, state and spool folders in the temporary folder,
``SlurmUser=root``, one node named after ``hostname -s`` with this machine's CPUs and one partition, on free
ports; ``slurmctld`` and ``slurmd`` started with ``-f`` on that file. Clients reach it through ``SLURM_CONF``.
Stopping signals only the daemons this object started (their pid files), after cancelling its jobs.
"""

from __future__ import annotations

import os
import pwd
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

SBIN = ("/usr/sbin", "/usr/bin", "/usr/local/sbin")
DAEMONS = ("munged", "slurmctld", "slurmd")
CLIENTS = ("sbatch", "squeue", "scontrol", "scancel", "sinfo")
PARTITION = "bench"
KILL_WAIT_S = 30


def _find(name: str) -> str | None:
    found = shutil.which(name)
    if found:
        return found
    for folder in SBIN:
        if os.access(Path(folder) / name, os.X_OK):
            return str(Path(folder) / name)
    return None


def why_not() -> str | None:
    """Why a test cluster cannot be started here, or None."""
    missing = [n for n in (*DAEMONS, *CLIENTS) if _find(n) is None]
    if missing:
        return (
            f"Slurm is not installed ({', '.join(missing)} missing): scripts/dev.sh test installs Debian's slurmctld, "
            "slurmd, slurm-client and munge with apt-get, which needs root or sudo"
        )
    if os.geteuid() != 0:
        return "a test Slurm cluster needs root (munged runs as the munge user, slurmd as root); run the tests as root"
    try:
        pwd.getpwnam("munge")
    except KeyError:
        return "the munge user does not exist (Debian's munge package creates it)"
    return None


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass
class SlurmCluster:
    root: Path
    node: str
    cpus: int
    version: str = ""

    @property
    def conf(self) -> Path:
        return self.root / "slurm.conf"

    @property
    def env(self) -> dict[str, str]:
        path = os.environ.get("PATH", "")
        return {**os.environ, "SLURM_CONF": str(self.conf), "PATH": ":".join([path, *SBIN])}

    def run(self, *argv: str, check: bool = True, timeout: float = 60) -> subprocess.CompletedProcess[str]:
        return subprocess.run(list(argv), env=self.env, capture_output=True, text=True, check=check, timeout=timeout)

    # -- lifecycle ------------------------------------------------------------------------------------------
    @classmethod
    def start(cls) -> SlurmCluster:
        root = Path(tempfile.mkdtemp(prefix="bench-slurm-"))
        root.chmod(0o755)  # munged (the munge user) must reach its socket folder
        cluster = cls(root=root, node=socket.gethostname().split(".")[0], cpus=os.cpu_count() or 1)
        try:
            cluster._start_munge()
            cluster._write_conf()
            for daemon in ("slurmctld", "slurmd"):
                cluster._daemon(daemon)
            cluster._wait_idle()
            cluster.version = cluster.run("sinfo", "--version").stdout.split()[-1]
        except BaseException:
            cluster.stop()
            raise
        return cluster

    def _start_munge(self) -> None:
        munge = self.root / "munge"
        (munge / "key").mkdir(parents=True)
        (munge / "key" / "munge.key").write_bytes(os.urandom(1024))
        user = pwd.getpwnam("munge")
        for path in (munge, munge / "key", munge / "key" / "munge.key"):
            os.chown(path, user.pw_uid, user.pw_gid)
        munge.chmod(0o755)
        (munge / "key").chmod(0o700)
        (munge / "key" / "munge.key").chmod(0o400)
        argv = [
            _find("munged") or "munged",
            f"--socket={munge / 'munge.sock'}",
            f"--key-file={munge / 'key' / 'munge.key'}",
            f"--pid-file={munge / 'munged.pid'}",
            f"--log-file={munge / 'munged.log'}",
            f"--seed-file={munge / 'key' / 'seed'}",
        ]
        subprocess.run(["su", "-s", "/bin/sh", "munge", "-c", " ".join(argv)], check=True, capture_output=True)

    def _write_conf(self) -> None:
        r = self.root
        for sub in ("state", "spool", "log"):
            (r / sub).mkdir()
        lines = [
            "ClusterName=benchtest",
            f"SlurmctldHost={self.node}(127.0.0.1)",
            f"SlurmctldPort={_free_port()}",
            f"SlurmdPort={_free_port()}",
            "SlurmUser=root",
            "SlurmdUser=root",
            "AuthType=auth/munge",
            "CredType=cred/munge",
            f"AuthInfo=socket={r / 'munge' / 'munge.sock'}",
            f"StateSaveLocation={r / 'state'}",
            f"SlurmdSpoolDir={r / 'spool'}",
            f"SlurmctldPidFile={r / 'slurmctld.pid'}",
            f"SlurmdPidFile={r / 'slurmd.pid'}",
            f"SlurmctldLogFile={r / 'log' / 'slurmctld.log'}",
            f"SlurmdLogFile={r / 'log' / 'slurmd.log'}",
            "ProctrackType=proctrack/linuxproc",
            "TaskPlugin=task/none",
            "SelectType=select/cons_tres",
            "SelectTypeParameters=CR_CPU",
            "AccountingStorageType=accounting_storage/none",
            "JobAcctGatherType=jobacct_gather/none",
            f"KillWait={KILL_WAIT_S}",
            "ReturnToService=2",
            "MpiDefault=none",
            f"NodeName={self.node} NodeAddr=127.0.0.1 CPUs={self.cpus} State=UNKNOWN",
            f"PartitionName={PARTITION} Nodes=ALL Default=YES MaxTime=INFINITE State=UP",
        ]
        self.conf.write_text("\n".join(lines) + "\n", encoding="utf-8")

    def _daemon(self, name: str) -> None:
        binary = _find(name)
        assert binary is not None
        subprocess.run([binary, "-f", str(self.conf)], env=self.env, check=True, capture_output=True, timeout=60)

    def _wait_idle(self, timeout: float = 60) -> None:
        deadline = time.monotonic() + timeout
        out = ""
        while time.monotonic() < deadline:
            done = self.run("sinfo", "-h", "-N", "-o", "%N %t", check=False)
            out = done.stdout + done.stderr
            if done.returncode == 0 and "idle" in done.stdout:
                return
            time.sleep(0.5)
        raise RuntimeError(f"the test Slurm node never became idle: {out}\n{self.logs()}")

    def logs(self) -> str:
        parts = []
        for name in ("log/slurmctld.log", "log/slurmd.log", "munge/munged.log"):
            path = self.root / name
            if path.is_file():
                parts.append(f"== {name}\n" + "\n".join(path.read_text(errors="replace").splitlines()[-30:]))
        return "\n".join(parts)

    def wait_jobs(self, *jobs: str, timeout: float = 300) -> None:
        """Until none of these jobs (array tasks included) is pending or running."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            done = self.run("squeue", "-h", "-r", f"--jobs={','.join(jobs)}", "-o", "%i %T", check=False)
            if done.returncode == 0 and not done.stdout.strip():
                return
            if done.returncode != 0 and "Invalid job id" in done.stderr:
                return
            time.sleep(0.5)
        raise TimeoutError(f"jobs {jobs} still queued after {timeout} s: {done.stdout}\n{self.logs()}")

    def stop(self) -> None:
        """Cancel this cluster's jobs, then stop the daemons it started (by their pid files)."""
        if (self.root / "slurmctld.pid").is_file():
            self.run("scancel", "--full", f"--partition={PARTITION}", check=False)
            deadline = time.monotonic() + KILL_WAIT_S + 10
            while time.monotonic() < deadline:
                done = self.run("squeue", "-h", check=False)
                if done.returncode != 0 or not done.stdout.strip():
                    break
                time.sleep(0.5)
        for pid_file in ("slurmd.pid", "slurmctld.pid", "munge/munged.pid"):
            _stop_pid(self.root / pid_file)
        shutil.rmtree(self.root, ignore_errors=True)


def _stop_pid(pid_file: Path, grace_s: float = 15) -> None:
    try:
        pid = int(pid_file.read_text().strip())
    except (OSError, ValueError):
        return
    try:
        os.kill(pid, signal.SIGTERM)
    except ProcessLookupError:
        return
    deadline = time.monotonic() + grace_s
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return
        time.sleep(0.1)
    os.kill(pid, signal.SIGKILL)
