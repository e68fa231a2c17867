#!/usr/bin/env bash
# The sharded client's scaling on the H200 host: one device call, at most ~3 minutes.
#
#   BENCH_COMMIT=<sha> bash benchmarks/h200_client_scaling.sh
#
# Runs benchmarks/client_scaling.py with the machine's own python3 (it needs httpx and rich, both in the image;
# no pydantic, nothing from /tmp/sg/site): the test server on SERVER_PROCS processes behind one port
# (SO_REUSEPORT), the sharded client on PROCS client processes (default 1 2 4 8 12 where there are >= 16 cores),
# C=512, 8x512 measured + 512 warm-up requests of 256 tokens per row, then one paced run at half the highest
# rate for the timestamp lag, on its own split of the cores so that no process waits for a core: the server on
# PACED_SERVER_PROCS (default a quarter of the cores: the server paces as a batched engine's decode steps, one
# ticker per process), the client on PACED_PROCS (default min(best row, cores - PACED_SERVER_PROCS - 1)); the log
# and the result state the split. EXTRA_SITE: a folder put on PYTHONPATH after the repository (e.g. uvloop unpacked
# from its wheel, as the GPU extra installs it with SGLang); the client runs on the loop bench run would choose.
# Goals (issue 13): >= 4x the 1-process rate; p99 lag < 1 ms at half the ceiling.
#
# Writes under $OUT (the device copies it back): client-scaling-h200.json (the result file, format in
# benchmarks/README.md; commit it as benchmarks/results/client-scaling-h200.json), client-scaling-h200.log
# (the table), machine.txt (lscpu, nproc, the python and package versions used).
# Exit status: 0 goals met, 3 a goal missed, 1 a run failed, 2 the environment lacks something (named).
set -uo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
OUT=${OUT:-$ROOT/out}
PY=${PY:-python3}
LIMIT_S=${LIMIT_S:-170}
mkdir -p "$OUT"
cd "$ROOT" || exit 2

cores=$(nproc)
if [[ -z ${PROCS:-} ]]; then
    PROCS="1 2 4 8"
    ((cores >= 16)) && PROCS="1 2 4 8 12"
fi
SERVER_PROCS=${SERVER_PROCS:-$(((cores + 3) / 4))}
PACED_SERVER_PROCS=${PACED_SERVER_PROCS:-$((cores / 4))}
CONCURRENCY=${CONCURRENCY:-512}
REQUESTS=${REQUESTS:-8}
TOKENS=${TOKENS:-256}

# the modules the benchmark imports, from the machine's python alone (PYTHONPATH = the repository only)
export PYTHONPATH=$ROOT${EXTRA_SITE:+:$EXTRA_SITE}
if ! "$PY" - <<'EOF' >"$OUT/machine.txt" 2>&1; then
import importlib.metadata as md, sys
missing = []
for name in ("httpx", "httpcore", "h11", "anyio", "idna", "certifi", "rich", "markdown_it", "pygments"):
    try:
        __import__(name)
    except ImportError as exc:
        missing.append(f"{name} ({exc})")
if sys.version_info < (3, 11):
    missing.append(f"Python >= 3.11 (this is {sys.version.split()[0]})")
print("python", sys.version.split()[0], sys.executable)
for dist in ("httpx", "httpcore", "h11", "anyio", "rich"):
    try:
        print(dist, md.version(dist))
    except md.PackageNotFoundError:
        pass
import bench.runner.shards, bench.runner.client, bench.testing.testserver  # the harness's modules import here
from bench.runner.event_loop import chosen_loop
print("event loop", chosen_loop())
if missing:
    print("MISSING:", ", ".join(missing))
    sys.exit(1)
EOF
    cat "$OUT/machine.txt"
    echo "h200_client_scaling: the environment lacks what the benchmark needs (above)" >&2
    exit 2
fi
{ echo "nproc $cores"; lscpu 2>/dev/null | grep -E '^(Model name|CPU\(s\)|Thread|Core|Socket|NUMA node\(s\))'; } >>"$OUT/machine.txt"

commit=${BENCH_COMMIT:-$(git -C "$ROOT" rev-parse HEAD 2>/dev/null || true)}
args=(--processes $PROCS --server-processes "$SERVER_PROCS" --concurrency "$CONCURRENCY" --requests "$REQUESTS"
      --warmup 1 --output-tokens "$TOKENS" --out "$OUT/client-scaling-h200.json"
      --paced-server-processes "$PACED_SERVER_PROCS" --label "${LABEL:-H200 host, $cores cores}")
[[ -n ${PACED_PROCS:-} ]] && args+=(--paced-processes "$PACED_PROCS")
[[ -n $commit ]] && args+=(--commit "${commit:0:12}")
[[ -z $commit ]] && echo "h200_client_scaling: no git checkout and no BENCH_COMMIT: the result names no commit" >&2

echo "client processes: $PROCS; server processes: $SERVER_PROCS; C=$CONCURRENCY; $cores cores" | tee "$OUT/client-scaling-h200.log"
timeout -k 10 "$LIMIT_S" "$PY" benchmarks/client_scaling.py "${args[@]}" 2>&1 | tee -a "$OUT/client-scaling-h200.log"
rc=${PIPESTATUS[0]}
((rc == 124 || rc == 137)) && echo "h200_client_scaling: stopped after ${LIMIT_S}s" | tee -a "$OUT/client-scaling-h200.log"
exit "$rc"
