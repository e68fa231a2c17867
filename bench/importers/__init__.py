"""Importers: result files of other benchmark tools turned into benchbook records (provenance ``imported``).

Each format module (``_sglang``, ``_vllm``, ``_guidellm``) reads a file with the reader of ``bench.record`` and
validates it against a pydantic model of the tool's document (``_source``), then makes a ``Run`` per load level
(with the configuration it ran); :func:`group_runs` folds runs that share everything but concurrency into one sweep;
:func:`build_records` makes one record per sweep. Figures the source lacks stay None; nothing is guessed.
"""

from ._formats import FORMATS, parse_file
from ._runs import Run, build_records, group_runs

__all__ = ["FORMATS", "Run", "build_records", "group_runs", "parse_file"]
