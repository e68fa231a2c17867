"""Campaigns on a Slurm cluster: ``bench submit`` (one job array of ``bench run`` tasks and a collector job),
``bench collect`` (validate, list what is missing, commit the records on a branch). Generated sbatch scripts,
submitted with ``sbatch --parsable``; no Slurm library."""
