"""Bad input on the command line and in settings: what benchbook guarantees for each, the one list of them.

Each row is ``(name, what happens, expected outcome)``; the name's part before ``/`` is its group. The expected
outcome starts with the exit status. ``tests/test_bad_input.py`` runs every row (a row without a test, or a test
without a row, fails) and checks, on every case, the exit status, one ``error:`` line naming the file (or flag) and
the field, no traceback, and that nothing was written. The "Reliability" docs page is generated from this list.
Plain data: no imports.
"""

BAD_INPUT_CASES: list[tuple[str, str, str]] = [
    (
        "import/records-dir-is-a-file",
        "bench import vllm RESULT --records-dir FILE, where FILE is an existing file",
        "exit 2; error: FILE: field '--records-dir': a folder to write records into (this is a file); nothing written",
    ),
    (
        "import/records-dir-under-a-file",
        "bench import vllm RESULT --records-dir FILE/records, below an existing file",
        "exit 2; error: FILE/records/imported: field '--records-dir': a folder that can be created (Not a "
        "directory); nothing written",
    ),
    (
        "import/experiment-climbs-out",
        "bench import vllm RESULT --experiment ../x",
        "exit 2; one line in the project's error shape (no pydantic text, no web link): --experiment: field "
        "'experiment': a name of lowercase letters, digits, '.', '_' and '-' … (got \"../x\"); nothing written",
    ),
    (
        "import/variant-climbs-out",
        "bench import vllm RESULT --variant ../../y",
        "exit 2; the name is refused as given, never silently changed to 'y'; nothing written",
    ),
    (
        "import/variant-looks-like-a-key",
        "bench import vllm RESULT --variant sk-abcdefgh12345678",
        "exit 2; refused (a record's name is its file name and page), the value not repeated; nothing written",
    ),
    (
        "import/text-over-its-cap",
        "a vLLM result whose date is 200,000 characters, which the importer keeps in provenance.notes",
        "exit 1; error: RESULT: field 'provenance.notes': String should have at most 4000 characters …; "
        "nothing written",
    ),
    (
        "render/output-is-a-file",
        "bench render FILE, where FILE is an existing file",
        "exit 2; error: FILE: field 'OUT_DIR': a folder to write the pages into (this is a file); nothing written",
    ),
    (
        "render/output-under-a-file",
        "bench render FILE/site, below an existing file",
        "exit 2; error: FILE/site: field 'OUT_DIR': a folder that can be created (Not a directory)",
    ),
    (
        "render/records-folder-missing",
        "bench render OUT --records recordz (a typo)",
        "exit 2; error: recordz: field '--records': a folder of records; nothing written",
    ),
    (
        "settings/duplicate-key",
        "benchbook.yaml gives 'baseline' twice for one experiment (PyYAML would keep the last silently)",
        "exit 2; error: benchbook.yaml: field 'line N column 5': valid YAML (the key \"baseline\" appears twice "
        "(first on line N-1); give each key once); nothing written",
    ),
    (
        "config/duplicate-key",
        "a run config gives 'engine' twice (bench run)",
        "exit 2; error: CONFIG: field 'line N column 1': valid YAML (the key \"engine\" appears twice …); "
        "no record, no server started",
    ),
    (
        "config/variant-looks-like-a-key",
        "bench run CONFIG --variant sk-abcdefgh12345678",
        "exit 2; error: CONFIG: field 'variant': a name that does not look like a key or token …, the value "
        "not repeated; no record",
    ),
]
