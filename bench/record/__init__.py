"""Records: the schema, migrations, loading with clear errors, and atomic writing."""

from ._migrate import migrate
from .errors import RecordError
from .load import LoadedRecord, LoadResult, iter_records, load_record, load_records, parse_record
from .model import SCHEMA_VERSION, Level, Metric, Record
from .store import create_record_file, dump_record, new_record_id, record_path, replace_record_file

__all__ = [
    "SCHEMA_VERSION",
    "Level",
    "LoadResult",
    "LoadedRecord",
    "Metric",
    "Record",
    "RecordError",
    "create_record_file",
    "dump_record",
    "iter_records",
    "load_record",
    "load_records",
    "migrate",
    "new_record_id",
    "parse_record",
    "record_path",
    "replace_record_file",
]
