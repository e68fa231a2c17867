"""Importers: result files of other benchmark tools turned into benchbook records (provenance ``imported``).

Each format module parses a file into ``Run``s (one load level each, with the configuration it ran);
``base.group_runs`` folds runs that share everything but concurrency into one sweep; ``base.build_record``
makes the record. Figures the source lacks stay None; nothing is guessed.
"""

from .base import Run, build_records, group_runs
from .formats import FORMATS, parse_file

__all__ = ["FORMATS", "Run", "build_records", "group_runs", "parse_file"]
