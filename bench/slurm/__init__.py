"""Campaigns on a Slurm cluster: ``bench submit`` (one job array of ``bench run`` tasks and a collector job),
``bench collect`` (validate, list what is missing, commit the records on a branch). Generated sbatch scripts,
submitted with ``sbatch --parsable``; no Slurm library.

Public modules: ``campaign`` (the campaign file), ``plan`` (the submitted plan and its folder), ``collect`` (what the
collector finds), ``attach`` (``python -m bench.slurm.attach``: a task that measures a server it starts itself) and
``commands``. Private: ``_cluster`` (sbatch, squeue, sacct, scontrol) and ``_scripts`` (the generated sbatch
scripts). The collector's commit goes through ``bench.git.commit_files``.
"""

__all__: list[str] = []
