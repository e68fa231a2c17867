"""``bench check``'s gate: what a change adds under ``records/`` and whether it may merge.

A change FAILS when it
* modifies, deletes, renames or changes the type of a file that exists under ``records/`` on the base
  (records are append-only: a correction is a new record);
* adds a record that does not load with ``bench.record.load_record`` (schema, id = file name,
  folder = experiment);
* adds a file under ``records/`` that is not at ``records/<experiment>/<id>.json``;
* leaves two records at HEAD with the same ``id`` or the same content hash (the content apart from
  ``id`` and ``created_at``, see ``snapshot.content_hash``);
* adds a JSON file under ``records/`` whose raw content holds what ``bench.redact.find_secrets`` takes for a
  secret (a key shape, URL user-info, a PEM block, a value under a secret name...). The failure names the file
  and the fields, never the value, and such a record is left out of the report.

Records already on the base that do not load are reported as warnings, not failures of this change. Every
reason and warning passes through ``bench.redact.redact_text``.

A records folder that lies outside the repository, or that is unknown or empty while the change adds JSON files
elsewhere, is a usage error (``GateEnvError``): checking it would pass "0 record(s) added" on records it missed.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from bench.git import Change, RepositoryError, TreeFile, diff_changes, files_at, open_repo, resolve_base
from bench.record import Record
from bench.redact import redact_text

from ._secrets import secret_fields, secret_reason, without_quoted_input
from ._snapshot import Loaded, Summary, is_record_path, load_tree, worktree_files

__all__ = ["AddedRecord", "CheckResult", "Failure", "GateEnvError", "run_check"]


class GateEnvError(Exception):
    """A usage or environment problem (not a git repository, missing base, a records folder that cannot hold
    what the change adds): exit code 2."""


@dataclass(frozen=True)
class Failure:
    path: str
    reason: str

    def __post_init__(self) -> None:  # a reason may quote a record's text (a validation message, a path)
        object.__setattr__(self, "path", redact_text(self.path))
        object.__setattr__(self, "reason", redact_text(self.reason))

    def __str__(self) -> str:
        return f"{self.path}: {self.reason}"


@dataclass(frozen=True)
class AddedRecord:
    path: str
    record: Record
    content_hash: str


@dataclass
class CheckResult:
    repo_root: Path
    base_label: str
    base_sha: str
    head_sha: str
    include_worktree: bool
    records_dir: str
    added_files: list[str] = field(default_factory=list)  # every file the change adds under the records folder
    added: list[AddedRecord] = field(default_factory=list)  # those that load and hold no secret
    secret_files: list[str] = field(default_factory=list)  # added files holding what looks like a secret
    failures: list[Failure] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    # rel path -> record on the base, of the added records' experiments and configurations (what the report compares)
    base_records: dict[str, Record] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return not self.failures


def _under(rel: str, records_dir: str) -> bool:
    prefix = PurePosixPath(records_dir).parts
    return tuple(PurePosixPath(rel).parts[: len(prefix)]) == prefix


def _append_only(changes: list[Change], records_dir: str) -> tuple[list[str], list[Failure]]:
    """Paths added under records/, and failures for everything that touches an existing file there."""
    added: list[str] = []
    failures: list[Failure] = []
    for ch in changes:
        if ch.kind == "renamed" and ch.old_path is not None and _under(ch.old_path, records_dir):
            failures.append(
                Failure(ch.old_path, f"renamed to {ch.path}: records are append-only (add a new record instead)")
            )
            if _under(ch.path, records_dir):
                added.append(ch.path)  # still judged as an addition: git may pair a deletion with a new record
            continue
        if ch.kind in ("added", "copied", "renamed"):
            if _under(ch.path, records_dir):
                added.append(ch.path)
            continue
        if not _under(ch.path, records_dir):
            continue
        verb = {"modified": "modified", "deleted": "deleted", "type-changed": "changed in type"}[ch.kind]
        failures.append(
            Failure(ch.path, f"{verb}: records are append-only (an existing record may not be {verb}; add a new one)")
        )
    return added, failures


def _duplicates(records: dict[str, Summary], added_paths: set[str]) -> list[Failure]:
    failures: list[Failure] = []
    for what, field_name in (("id", "id"), ("content hash", "content_hash")):
        groups: dict[str, list[str]] = defaultdict(list)
        for rel, summary in records.items():
            groups[getattr(summary, field_name)].append(rel)
        for key, paths in sorted(groups.items()):
            if len(paths) < 2:
                continue
            blamed = [p for p in paths if p in added_paths] or paths
            for p in blamed:
                others = ", ".join(o for o in paths if o != p)
                shown = key if what == "id" else key[:12]
                failures.append(Failure(p, f"duplicate {what} {shown}: also used by {others}"))
    return failures


def _read(f: TreeFile | None) -> bytes | None:
    return f.read() if f is not None else None


def _listing(paths: list[str], limit: int = 10) -> str:
    shown = ", ".join(paths[:limit])
    return shown + (f" and {len(paths) - limit} more" if len(paths) > limit else "")


def _folder_error(given: str, problem: str, uncovered: list[str]) -> GateEnvError:
    msg = f"records folder '{given}' {problem}"
    if uncovered:
        tops = sorted({PurePosixPath(p).parts[0] for p in uncovered if len(PurePosixPath(p).parts) > 1})
        hint = f" (did you mean --records-dir {tops[0]}?)" if len(tops) == 1 else ""
        msg += f"; the change adds JSON files it does not cover: {_listing(uncovered)}{hint}"
    return GateEnvError(msg)


def records_folder(root: Path, given: str, uncovered: list[str]) -> str:
    """``given`` as a POSIX path relative to the repository root; a folder outside it (or the root itself) is a
    ``GateEnvError`` that names the JSON files the change adds (``uncovered``)."""
    path = PurePosixPath(given.replace("\\", "/"))
    if path.is_absolute():
        try:
            path = PurePosixPath(Path(given).resolve().relative_to(root.resolve()).as_posix())
        except ValueError:
            path = PurePosixPath("..")
    if not path.parts or ".." in path.parts:
        problem = "is not a sub-folder inside the repository (give it relative to the root)"
        raise _folder_error(given, problem, uncovered)
    return path.as_posix()


def run_check(
    repo_path: Path, base: str | None = None, *, records_dir: str = "records", include_worktree: bool = False
) -> CheckResult:
    """Run the gate. Raises ``GateEnvError`` for a folder that is not a repository, a missing base, or a records
    folder that cannot hold what the change adds (see the module docstring)."""
    try:
        repo = open_repo(repo_path)
        base_label, base_sha = resolve_base(repo, base)
    except RepositoryError as exc:
        raise GateEnvError(str(exc)) from None
    root = Path(str(repo.working_tree_dir))
    changes = diff_changes(repo, base_sha, include_worktree=include_worktree)
    added_json = sorted(
        {c.path for c in changes if c.kind in ("added", "copied", "renamed") and c.path.endswith(".json")}
    )
    given = records_dir
    records_dir = records_folder(root, given, added_json)
    uncovered = [p for p in added_json if not _under(p, records_dir)]

    head_files = worktree_files(root, records_dir) if include_worktree else files_at(repo, "HEAD", records_dir)
    base_files = files_at(repo, base_sha, records_dir)
    if uncovered and not any(p.endswith(".json") for p in (*head_files, *base_files)):
        exists = bool(head_files or base_files) or (include_worktree and (root / records_dir).is_dir())
        problem = "holds no JSON file" if exists else "does not exist (neither at the base nor at HEAD)"
        raise _folder_error(given, problem, uncovered)

    result = CheckResult(
        repo_root=root,
        base_label=base_label,
        base_sha=base_sha,
        head_sha=repo.head.commit.hexsha,
        include_worktree=include_worktree,
        records_dir=records_dir,
    )
    added_paths, result.failures = _append_only(changes, records_dir)
    result.added_files = sorted(added_paths)

    # only the added records whole, and on the base those they are compared with (bench.gate._report: the same
    # experiment, or the same configuration's history). Every file is loaded once: the added records first (what
    # they are decides which base records are held), then the base, then the rest of the head, whose files the base
    # shares (the same path and bytes) are not loaded or read again
    loaded: Loaded = {}
    fresh = load_tree({rel: f for rel, f in head_files.items() if rel in added_paths}, records_dir, loaded=loaded)
    experiments = {s.experiment for s in fresh.summaries.values()}
    configurations = {(s.variant, s.fingerprint) for s in fresh.summaries.values()}

    def compared(rel: str, s: Summary) -> bool:
        return s.experiment in experiments or (s.variant, s.fingerprint) in configurations

    result.base_records = load_tree(base_files, records_dir, keep=compared, loaded=loaded).records
    head = load_tree(head_files, records_dir, keep=lambda rel, _: False, loaded=loaded)

    secrets = {rel: found for rel in added_paths if (found := secret_fields(_read(head_files.get(rel))))}
    result.secret_files = sorted(secrets)
    for rel in sorted(added_paths):
        if rel in secrets:
            result.failures.append(Failure(rel, secret_reason(secrets[rel])))
        if not is_record_path(rel, records_dir):
            result.failures.append(
                Failure(
                    rel,
                    f"outside {records_dir}/<experiment>/: a record must sit at {records_dir}/<experiment>/<id>.json",
                )
            )
        elif rel in head.errors:
            err = head.errors[rel]
            expected = without_quoted_input(err.expected) if rel in secrets else err.expected
            result.failures.append(Failure(rel, f"invalid record: field '{err.field}': {expected}"))
        elif rel in fresh.records and rel not in secrets:
            rec = fresh.records[rel]
            result.added.append(AddedRecord(path=rel, record=rec, content_hash=head.summaries[rel].content_hash))
    if uncovered:
        result.warnings.append(
            f"JSON file(s) added outside {records_dir}/ are not checked as records: {_listing(uncovered)}"
        )
    for rel, err in sorted(head.errors.items()):
        if rel not in added_paths:
            result.warnings.append(redact_text(f"existing record does not load: {err}"))
    result.failures += _duplicates(head.summaries, set(added_paths))
    return result
