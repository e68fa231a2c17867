"""Talking to Slurm through its command-line tools: ``sbatch --parsable``, ``squeue``, ``sacct``, ``scontrol``.

Every command goes through a ``Runner`` (argv -> exit status, stdout, stderr), so the parsers below are pure
functions over the tools' text. Task states come from three sources, the first that knows wins:

* ``squeue -r`` for tasks still pending or running (the controller's live view);
* ``sacct`` for finished ones, where the cluster keeps accounting (slurmdbd);
* ``scontrol show job`` otherwise: the controller keeps a finished job for ``MinJobAge`` (300 s by default).

A task none of them knows is reported as ``UNKNOWN``; its record, not its Slurm state, says what it measured.
"""

from __future__ import annotations

import re
import subprocess
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass

__all__ = [
    "Runner",
    "SlurmError",
    "TaskState",
    "default_runner",
    "expand_indices",
    "parse_sacct",
    "parse_scontrol",
    "parse_squeue",
    "sbatch",
    "scancel",
    "task_states",
]

Runner = Callable[[Sequence[str]], tuple[int, str, str]]


class SlurmError(Exception):
    """A Slurm command failed (not installed, controller unreachable, submission refused)."""


@dataclass(frozen=True)
class TaskState:
    array_job: str
    index: int
    state: str  # PENDING, RUNNING, COMPLETED, FAILED, CANCELLED, TIMEOUT, NODE_FAIL, OUT_OF_MEMORY, ...
    job_id: str | None = None  # the task's own job id (SLURM_JOB_ID inside the task)
    exit_code: str | None = None
    nodes: str | None = None
    source: str = ""


def default_runner(argv: Sequence[str], timeout: float = 60.0) -> tuple[int, str, str]:
    try:
        proc = subprocess.run(list(argv), capture_output=True, text=True, timeout=timeout, check=False)
    except FileNotFoundError:
        return 127, "", f"{argv[0]}: command not found"
    except (OSError, subprocess.SubprocessError) as exc:
        return 1, "", f"{argv[0]}: {exc}"
    return proc.returncode, proc.stdout, proc.stderr


def sbatch(script: str, *, run: Runner, dependency: str | None = None) -> str:
    """Submit a script file with ``sbatch --parsable``; the job id (``jobid[;cluster]`` -> ``jobid``)."""
    argv = ["sbatch", "--parsable"]
    if dependency is not None:
        argv.append(f"--dependency={dependency}")
    code, out, err = run([*argv, script])
    job = out.strip().split(";", 1)[0]
    if code != 0 or not re.fullmatch(r"[0-9]+", job):
        raise SlurmError(f"sbatch {script} failed (exit {code}): {(err or out).strip()[:500]}")
    return job


def scancel(job: str, *, run: Runner) -> None:
    code, out, err = run(["scancel", job])
    if code != 0:
        raise SlurmError(f"scancel {job} failed (exit {code}): {(err or out).strip()[:500]}")


_RANGE = re.compile(r"^([0-9]+)(?:-([0-9]+))?(?::([0-9]+))?$")


def expand_indices(spec: str) -> list[int]:
    """``0-3,5,8-12:2%4`` -> ``[0, 1, 2, 3, 5, 8, 10, 12]``; an unreadable part is skipped."""
    spec = spec.strip().strip("[]").split("%", 1)[0]
    out: list[int] = []
    for part in spec.split(","):
        m = _RANGE.match(part.strip())
        if not m:
            continue
        start = int(m.group(1))
        end = int(m.group(2)) if m.group(2) else start
        step = int(m.group(3)) if m.group(3) else 1
        out.extend(range(start, end + 1, max(step, 1)))
    return out


def _array_id(text: str) -> tuple[str, list[int]] | None:
    """``123_4`` -> ("123", [4]); ``123_[5-7%2]`` -> ("123", [5, 6, 7]); a plain job id -> None."""
    m = re.match(r"^([0-9]+)_(\[?[0-9,\-:%]+\]?)$", text.strip())
    if not m:
        return None
    return m.group(1), expand_indices(m.group(2))


def _state_word(text: str) -> str:
    """``CANCELLED by 0`` -> ``CANCELLED``; ``COMPLETED+`` -> ``COMPLETED``."""
    word = text.strip().split(" ", 1)[0].rstrip("+")
    return word or "UNKNOWN"


def _array_rows(text: str, width: int) -> Iterator[tuple[list[str], str, list[int]]]:
    """``(cells, array job, task indices)`` for each ``|``-separated line of ``width`` cells naming array tasks."""
    for line in text.splitlines():
        cells = line.strip().split("|")
        if len(cells) == width and (parsed := _array_id(cells[0])) is not None:
            yield cells, *parsed


def parse_squeue(text: str) -> list[TaskState]:
    """``squeue -h -r -o '%i|%A|%T|%N'`` lines: ``123_4|127|RUNNING|node1``."""
    out: list[TaskState] = []
    for cells, array_job, indices in _array_rows(text, 4):
        for i in indices:
            job_id = cells[1].strip() if len(indices) == 1 else None
            out.append(TaskState(array_job, i, _state_word(cells[2]), job_id, None, cells[3].strip() or None, "squeue"))
    return out


def parse_sacct(text: str) -> list[TaskState]:
    """``sacct -n -P -X --format=JobID,JobIDRaw,State,ExitCode,NodeList`` lines:
    ``123_4|127|COMPLETED|0:0|node1``; a pending array's ``123_[5-7]|123|PENDING|0:0|None assigned``."""
    out: list[TaskState] = []
    for cells, array_job, indices in _array_rows(text, 5):
        nodes = cells[4].strip()
        for i in indices:
            job_id = cells[1].strip() if len(indices) == 1 else None
            out.append(
                TaskState(
                    array_job,
                    i,
                    _state_word(cells[2]),
                    job_id,
                    cells[3].strip() or None,
                    None if nodes in ("", "None assigned") else nodes,
                    "sacct",
                )
            )
    return out


_KV = re.compile(r"(?:^|\s)(JobId|ArrayJobId|ArrayTaskId|JobState|ExitCode|NodeList)=(\S*)")


def parse_scontrol(text: str) -> list[TaskState]:
    """``scontrol -o show job <array job>``: one line per task (or per pending range of tasks)."""
    out: list[TaskState] = []
    for line in text.splitlines():
        kv = dict(_KV.findall(line))
        if "ArrayJobId" not in kv or "ArrayTaskId" not in kv:
            continue
        indices = expand_indices(kv["ArrayTaskId"])
        nodes = kv.get("NodeList") or None
        for i in indices:
            out.append(
                TaskState(
                    kv["ArrayJobId"],
                    i,
                    _state_word(kv.get("JobState", "")),
                    kv.get("JobId") if len(indices) == 1 else None,
                    kv.get("ExitCode") or None,
                    None if nodes == "(null)" else nodes,
                    "scontrol",
                )
            )
    return out


def task_states(array_jobs: Iterable[str], *, run: Runner) -> dict[tuple[str, int], TaskState]:
    """Every known task of these array jobs, by (array job, index): squeue over sacct over scontrol."""
    jobs = sorted(set(array_jobs))
    if not jobs:
        return {}
    found: dict[tuple[str, int], TaskState] = {}
    sources: list[tuple[str, list[TaskState]]] = []
    code, out, _ = run(["squeue", "-h", "-r", f"--jobs={','.join(jobs)}", "-o", "%i|%A|%T|%N"])
    sources.append(("squeue", parse_squeue(out) if code == 0 else []))
    code, out, _ = run(
        ["sacct", "-n", "-P", "-X", f"--jobs={','.join(jobs)}", "--format=JobID,JobIDRaw,State,ExitCode,NodeList"]
    )
    accounted = parse_sacct(out) if code == 0 else []
    sources.append(("sacct", accounted))
    if not accounted:  # no accounting on this cluster: the controller's memory of recent jobs
        for job in jobs:
            code, out, _ = run(["scontrol", "-o", "show", "job", job])
            sources.append(("scontrol", parse_scontrol(out) if code == 0 else []))
    for _, states in sources:
        for st in states:
            found.setdefault((st.array_job, st.index), st)
    return found
