"""The Slurm facts a record keeps: named variables only, through the environment allow-list."""

from __future__ import annotations

from bench.runner.environment import allowed_variables

JOB_ENV = {  # a real array task's SLURM_* variables (Slurm 22.05.8, the test cluster), plus a GPU allocation
    "SLURM_ARRAY_JOB_ID": "4", "SLURM_ARRAY_TASK_ID": "0", "SLURM_CLUSTER_NAME": "benchtest", "SLURM_CONF":
    "/tmp/sl/slurm.conf", "SLURM_CPUS_ON_NODE": "1", "SLURM_JOBID": "6", "SLURM_JOB_ID": "6", "SLURM_JOB_NODELIST":
    "vm", "SLURM_JOB_NUM_NODES": "1", "SLURM_JOB_PARTITION": "debug", "SLURM_JOB_UID": "0", "SLURM_JOB_USER": "root",
    "SLURM_SUBMIT_DIR": "/home/ada/campaigns", "SLURM_SUBMIT_HOST": "login1", "SLURM_TASK_PID": "16944",
    "SLURM_WORKING_CLUSTER": "benchtest:127.0.0.1:16817:9728:109", "SLURMD_NODENAME": "vm", "SLURM_JOB_GPUS": "0,1",
    "SLURM_GPUS_ON_NODE": "2", "SLURM_VERSION": "22.05.8", "HOME": "/home/ada",
}  # fmt: skip


def test_job_array_partition_nodes_gpus_and_version_are_kept_and_nothing_else() -> None:
    kept = allowed_variables(JOB_ENV)
    assert kept == {
        "SLURM_ARRAY_JOB_ID": "4", "SLURM_ARRAY_TASK_ID": "0", "SLURM_CLUSTER_NAME": "benchtest",
        "SLURM_CPUS_ON_NODE": "1", "SLURM_JOB_ID": "6", "SLURM_JOB_NODELIST": "vm", "SLURM_JOB_NUM_NODES": "1",
        "SLURM_JOB_PARTITION": "debug", "SLURM_JOB_GPUS": "0,1", "SLURM_GPUS_ON_NODE": "2", "SLURM_VERSION": "22.05.8",
    }  # fmt: skip
