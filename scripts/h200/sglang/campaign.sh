#!/usr/bin/env bash
# The h200-sglang measurements, in phases that each fit one device call (run ON the H200 machine after
# `remote.sh setup`; every server stays up between calls while the machine is warm).
#
#   campaign.sh serve      # assemble the EAGLE-3 head (carried in the payload), start the five servers, wait
#   campaign.sh core       # baseline x2 and NGRAM x2, full sweeps (attached)               [first session]
#   campaign.sh eagle      # EAGLE-3 tree x2 and chain x1, full sweeps (attached)
#   campaign.sh more       # baseline x1, NGRAM x1 on its fresh server, then the three one-change pairs at
#                          # C=1, 8, 64: prompts repeated (prefix cache), the OpenAI chat route,
#                          # --incremental-streaming-output; and raw streams from each server as test fixtures
#   campaign.sh launched   # one baseline sweep launched by bench run itself (C=1, 8, 64)
#   campaign.sh tp         # several GPUs: bench/configs/h200-sglang-tp/* launched by bench run (tp 1, tp 2 with and
#                          # without FlashInfer allreduce fusion, NGRAM at tp 2); MODEL=path overrides the model,
#                          # which must have head counts that divide by 2 (bench run refuses SmolLM2-135M's 9)
#
# All five servers are resident on the one GPU while any of them is measured (each holds
# --mem-fraction-static 0.1, started one after another: see remote.sh serve); the records' descriptions say so. Records and logs come back as tarballs in $OUT.
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$HERE/../../.." && pwd)"
cd "$ROOT"
R="bash $HERE/remote.sh"
C=bench/configs/h200-sglang
SHARED="Measured attached while five SGLang servers (baseline, incremental, NGRAM, EAGLE-3 tree, EAGLE-3 chain) were resident on the one H200, each with --mem-fraction-static 0.1; only the measured one had traffic."
PORTS=(30001 30002 30003 30004 30005)
ARGS=(--attention-backend triton --sampling-backend pytorch --mem-fraction-static 0.1 --cuda-graph-max-bs 16
  --enable-metrics --enable-cache-report)
HEAD=/tmp/sg/eagle3-head

pack() {  # records and logs back through $OUT (at most 8 files a call)
  mkdir -p "$OUT"
  [ -d "$OUT/records" ] && tar -C "$OUT" -czf "$OUT/records-$1.tar.gz" records && rm -rf "$OUT/records"
  $R logs >/dev/null && tar -C "$OUT" -czf "$OUT/logs-$1.tar.gz" logs && rm -rf "$OUT/logs"
  ls -la "$OUT"
}

fixtures() {  # one streamed /generate and one chat stream per server, raw, for the CPU replay tests
  mkdir -p "$OUT/fixtures"
  local body='{"text": "Write a Python function that reverses a list.", "stream": true,
    "sampling_params": {"max_new_tokens": 24, "temperature": 0}}'
  local chat='{"model": "default", "stream": true, "max_tokens": 24, "temperature": 0,
    "stream_options": {"include_usage": true}, "messages": [{"role": "user", "content": "Reverse a list in Python."}]}'
  for s in baseline:30001 incremental:30002 ngram:30003 eagle3-tree:30004 eagle3-chain:30005; do
    curl -sN -m 30 -H 'content-type: application/json' -d "$body" "http://127.0.0.1:${s#*:}/generate" \
      > "$OUT/fixtures/${s%%:*}-generate-stream.sse" || true
    curl -sN -m 30 -H 'content-type: application/json' -d "$chat" "http://127.0.0.1:${s#*:}/v1/chat/completions" \
      > "$OUT/fixtures/${s%%:*}-chat-stream.sse" || true
    curl -s -m 10 "http://127.0.0.1:${s#*:}/server_info" > "$OUT/fixtures/server_info-${s%%:*}.json" || true
  done
  tar -C "$OUT" -czf "$OUT/fixtures.tar.gz" fixtures && rm -rf "$OUT/fixtures"
}

run() { $R run "$@" --set "description='$SHARED'" || echo "bench run exited $?"; }

case "${1:?usage: campaign.sh serve|core|eagle|more|launched|tp}" in
  serve)
    PYTHONPATH="/tmp/sg/site:$ROOT" python3 "$HERE/train_eagle3.py" --target /tmp/sg/smol --out "$HEAD" \
      --assemble /tmp/sg/trained.safetensors
    $R serve baseline 30001 "${ARGS[@]}"
    $R serve incremental 30002 "${ARGS[@]}" --incremental-streaming-output
    $R serve ngram 30003 "${ARGS[@]}" --speculative-algorithm NGRAM --speculative-num-draft-tokens 8
    $R serve eagle3-tree 30004 "${ARGS[@]}" --speculative-algorithm EAGLE3 --speculative-draft-model-path "$HEAD" \
      --speculative-num-steps 5 --speculative-eagle-topk 4 --speculative-num-draft-tokens 16
    $R serve eagle3-chain 30005 "${ARGS[@]}" --speculative-algorithm EAGLE3 --speculative-draft-model-path "$HEAD" \
      --speculative-num-steps 3 --speculative-eagle-topk 1 --speculative-num-draft-tokens 4
    $R wait "${PORTS[@]}" --timeout "${WAIT_S:-420}" || { pack serve; exit 1; }
    nvidia-smi --query-gpu=memory.used,utilization.gpu --format=csv,noheader
    ;;
  core)
    run $C/baseline.yaml --url http://127.0.0.1:30001 --repeat 2
    run $C/ngram.yaml --url http://127.0.0.1:30003 --repeat 2
    pack core
    ;;
  eagle)
    run $C/eagle3-tree.yaml --url http://127.0.0.1:30004 --repeat 2
    run $C/eagle3-chain.yaml --url http://127.0.0.1:30005
    pack eagle
    ;;
  more)
    run $C/baseline.yaml --url http://127.0.0.1:30001
    run $C/ngram.yaml --url http://127.0.0.1:30003
    few=(--levels 1,8,64)
    run $C/baseline.yaml --url http://127.0.0.1:30001 --variant baseline-repeated --set prefix=repeated "${few[@]}"
    run $C/baseline-chat.yaml --url http://127.0.0.1:30001 "${few[@]}"
    run $C/baseline-incremental.yaml --url http://127.0.0.1:30002 "${few[@]}"
    fixtures
    pack more
    ;;
  launched)
    $R stop all
    SHARED="Launched by bench run itself, alone on the GPU." run $C/baseline.yaml --levels 1,8,64
    pack launched
    ;;
  tp)
    gpus="$(nvidia-smi -L | grep -c '^GPU')"
    [ "$gpus" -ge 2 ] || { echo "campaign.sh tp needs at least 2 GPUs; this host has $gpus" >&2; exit 2; }
    $R stop all
    nvidia-smi topo -m
    for v in baseline-tp1 baseline-tp2 baseline-tp2-fusion ngram-tp2; do
      SHARED="Launched by bench run itself on a host with $gpus GPUs." \
        run bench/configs/h200-sglang-tp/$v.yaml ${MODEL:+--set "model.path=$MODEL"}
    done
    pack tp
    ;;
  *) echo "unknown phase: $1" >&2; exit 2 ;;
esac
