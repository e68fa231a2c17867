#!/usr/bin/env bash
# The pull-request checks, exactly as CI runs them (.github/workflows/records.yml), in one command:
#   scripts/pr_check.sh [BASE]
#   1. bench check: the records gate (append-only, valid, unique, in place, no secret) + the PR report
#      (report.md is posted as the PR comment: capped at $PR_CHECK_MAX_CHARS characters, 60000 by default,
#      details folded away first; report.json always holds everything)
#   2. mkdocs build --strict into a temporary folder
#   3. bench check-offline on the built site (when this checkout has that command)
# BASE defaults to the merge-base of HEAD with origin/main (or main). Uncommitted files are checked too
# unless PR_CHECK_COMMITTED_ONLY=1 (CI sets it). Outputs go to $PR_CHECK_OUT (default: a new temp folder):
# report.md, report.json, site/.
# Exit: 0 all passed; 1 the gate or a later step failed; 2 usage/environment error (no repo, no base).
set -uo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
export NO_MKDOCS_2_WARNING=1 DISABLE_MKDOCS_2_WARNING=true
PY="${BENCHBOOK_PY:-}"
if [ -z "$PY" ]; then
  if [ -x "$ROOT/.venv/bin/python" ]; then PY="$ROOT/.venv/bin/python"; else PY="python3"; fi
fi
OUT="${PR_CHECK_OUT:-$(mktemp -d "${TMPDIR:-/tmp}/pr-check.XXXXXX")}"
mkdir -p "$OUT"
BASE_ARGS=()
[ $# -ge 1 ] && [ -n "$1" ] && BASE_ARGS=(--base "$1")
WT_ARGS=(--worktree)
[ "${PR_CHECK_COMMITTED_ONLY:-0}" = "1" ] && WT_ARGS=()

status=0
echo "== 1/3 bench check ${BASE_ARGS[*]:-} ${WT_ARGS[*]:-}"
"$PY" -m bench check --repo "$ROOT" "${BASE_ARGS[@]}" "${WT_ARGS[@]}" --format json --report "$OUT/report.json" 2>/dev/null
"$PY" -m bench check --repo "$ROOT" "${BASE_ARGS[@]}" "${WT_ARGS[@]}" --report "$OUT/report.md" \
  --max-chars "${PR_CHECK_MAX_CHARS:-60000}"
rc=$?
if [ "$rc" -eq 2 ]; then
  echo "pr_check: cannot run the gate (see above)" >&2
  exit 2
fi
[ "$rc" -ne 0 ] && status=1

# A record holding a secret must not reach the site preview (an artifact anyone with read access can download).
if "$PY" -c 'import json, sys; sys.exit(0 if json.load(open(sys.argv[1])).get("secret_files") else 1)' \
    "$OUT/report.json" 2>/dev/null; then
  echo "== 2/3 mkdocs build --strict: skipped (an added record holds a secret; no site preview is built)"
  echo "== 3/3 bench check-offline: skipped"
  echo "report: $OUT/report.md"
  echo "pr_check: FAILED" >&2
  exit 1
fi

echo "== 2/3 mkdocs build --strict"
if ! "$PY" -m mkdocs build --strict --quiet --config-file "$ROOT/mkdocs.yml" --site-dir "$OUT/site"; then
  echo "pr_check: the strict site build failed" >&2
  status=1
fi

echo "== 3/3 bench check-offline"
if "$PY" -m bench --help 2>/dev/null | grep -q "check-offline"; then
  if [ -d "$OUT/site" ]; then
    "$PY" -m bench check-offline "$OUT/site" || status=1
  fi
else
  echo "(bench check-offline is not in this checkout: skipped)"
fi

echo "report: $OUT/report.md"
echo "site:   $OUT/site"
[ "$status" -eq 0 ] && echo "pr_check: all checks passed" || echo "pr_check: FAILED" >&2
exit "$status"
