#!/usr/bin/env bash
# Fuzzes several targets side by side on a machine with many cores, each in libFuzzer's fork mode
# (WORKERS processes sharing one corpus), through fuzz/run.sh with its limits and dictionaries.
#   fuzz/campaign.sh SECONDS TARGET:WORKERS [TARGET:WORKERS...]
# e.g. fuzz/campaign.sh 540 model:8 user_rules:7 runs 8 x 9 = 72 CPU minutes on the model target.
# MODELCOST_FUZZ_BINARIES=DIR runs targets built elsewhere (see run.sh); logs go to
# MODELCOST_FUZZ_LOGS (default fuzz/findings/). Prints each target's last status line and its
# findings; exits non-zero if any target failed.
set -uo pipefail
cd "$(dirname "$0")/.."
seconds=$1
shift
logs=${MODELCOST_FUZZ_LOGS:-fuzz/findings}
mkdir -p "$logs"
if [ -z "${MODELCOST_FUZZ_BINARIES:-}" ]; then  # build each target once, before any runs
  for spec in "$@"; do MODELCOST_FUZZ_BUILD_ONLY=1 fuzz/run.sh "${spec%%:*}" || exit 1; done
fi
declare -A pids
for spec in "$@"; do
  target=${spec%%:*} workers=${spec##*:}
  fuzz/run.sh "$target" "$seconds" -fork="$workers" >"$logs/$target.log" 2>&1 &
  pids[$target]=$!
done
status=0
for target in "${!pids[@]}"; do
  if wait "${pids[$target]}"; then result=clean; else result="FAILED (rc $?)"; status=1; fi
  echo "$target: $result; last status: $(grep -E '^#[0-9]+: cov' "$logs/$target.log" | tail -1)"
done
ls fuzz/findings | grep -vE '\.log$' | sed 's/^/finding: /'
exit $status
