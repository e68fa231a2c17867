"""Reading Slurm's tools. The squeue lines are what Slurm 22.05.8 printed for a throttled array (``--array=0-5%2``)
on the test cluster, the scontrol lines are shortened from its output; the sacct lines follow sacct's
``--parsable2`` format (the test cluster has no slurmdbd, so sacct itself is not run here)."""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from bench.slurm._cluster import SlurmError, parse_sacct, parse_scontrol, parse_squeue, sbatch, task_states

SQUEUE_R = "14_2|14|PENDING|\n14_3|14|PENDING|\n14_1|16|RUNNING|vm\n14_0|15|RUNNING|vm\n"
SQUEUE_COMPACT = "14_[2-5%2]|14|PENDING|\n14_1|16|RUNNING|vm\n"
SCONTROL = (
    "JobId=14 ArrayJobId=14 ArrayTaskId=2-5%2 ArrayTaskThrottle=2 JobName=sleep.sh UserId=root(0) JobState=PENDING "
    "Reason=JobArrayTaskLimit Dependency=(null) ExitCode=0:0 NodeList=(null) StdOut=/tmp/sl/sleep_14_4294967294.txt\n"
    "JobId=16 ArrayJobId=14 ArrayTaskId=1 ArrayTaskThrottle=2 JobName=sleep.sh UserId=root(0) JobState=CANCELLED "
    "Reason=None Dependency=(null) ExitCode=0:15 NodeList=vm StdOut=/tmp/sl/sleep_14_1.txt\n"
)
SACCT = "14_0|15|COMPLETED|0:0|gpu-[01-02]\n14_1|16|CANCELLED by 0|0:15|gpu-03\n14_[2-3]|14|PENDING|0:0|None assigned\n"


def test_squeue_lines_expand_to_tasks() -> None:
    got = {(s.index, s.state, s.job_id, s.nodes) for s in parse_squeue(SQUEUE_R)}
    assert got == {(2, "PENDING", "14", None), (3, "PENDING", "14", None), (1, "RUNNING", "16", "vm"),
                   (0, "RUNNING", "15", "vm")}  # fmt: skip
    compact = {(s.index, s.state, s.job_id) for s in parse_squeue(SQUEUE_COMPACT)}
    assert compact == {(2, "PENDING", None), (3, "PENDING", None), (4, "PENDING", None), (5, "PENDING", None),
                       (1, "RUNNING", "16")}  # fmt: skip


def test_scontrol_lines_expand_pending_ranges() -> None:
    got = {(s.array_job, s.index, s.state, s.job_id, s.exit_code, s.nodes) for s in parse_scontrol(SCONTROL)}
    assert got == {("14", i, "PENDING", None, "0:0", None) for i in (2, 3, 4, 5)} | {
        ("14", 1, "CANCELLED", "16", "0:15", "vm")
    }


def test_sacct_states_lose_their_suffixes() -> None:
    got = [(s.index, s.state, s.job_id, s.exit_code, s.nodes) for s in parse_sacct(SACCT)]
    assert got == [
        (0, "COMPLETED", "15", "0:0", "gpu-[01-02]"), (1, "CANCELLED", "16", "0:15", "gpu-03"),
        (2, "PENDING", None, "0:0", None), (3, "PENDING", None, "0:0", None),
    ]  # fmt: skip


class FakeSlurm:
    """Answers squeue/sacct/scontrol with fixed text and records what was asked."""

    def __init__(self, answers: dict[str, tuple[int, str, str]]) -> None:
        self.answers = answers
        self.calls: list[str] = []

    def __call__(self, argv: Sequence[str]) -> tuple[int, str, str]:
        self.calls.append(argv[0])
        return self.answers.get(argv[0], (1, "", "not answered"))


def test_live_states_win_and_scontrol_fills_in_only_without_accounting() -> None:
    squeue = (0, "14_1|16|RUNNING|vm\n", "")
    no_accounting = (1, "", "Slurm accounting storage is disabled")
    fake = FakeSlurm({"squeue": squeue, "sacct": no_accounting, "scontrol": (0, SCONTROL, "")})
    states = task_states(["14"], run=fake)
    assert fake.calls == ["squeue", "sacct", "scontrol"]
    assert states[("14", 1)].state == "RUNNING" and states[("14", 1)].source == "squeue"  # over scontrol's CANCELLED
    assert states[("14", 4)].source == "scontrol"

    fake = FakeSlurm({"squeue": (0, "", ""), "sacct": (0, SACCT, ""), "scontrol": (0, SCONTROL, "")})
    states = task_states(["14"], run=fake)
    assert fake.calls == ["squeue", "sacct"]  # accounting answered: the controller is not asked
    assert states[("14", 1)].state == "CANCELLED" and states[("14", 1)].source == "sacct"


def test_sbatch_returns_the_job_id_or_says_why_not() -> None:
    assert sbatch("a.sh", run=FakeSlurm({"sbatch": (0, "1234;cluster-a\n", "")})) == "1234"
    refused = FakeSlurm({"sbatch": (1, "", "sbatch: error: invalid partition specified: gpu")})
    with pytest.raises(SlurmError, match="invalid partition specified: gpu"):
        sbatch("a.sh", run=refused)
