#!/usr/bin/env bash
# Does the sandbox of measured code (ci/scripts/sandbox.sh, a bubblewrap container per command)
# work on a GPU runner, and does it cost decode time? Runs the same CUDA sweep alternately
# outside and inside the container, ROUNDS times each, as root and (where the kernel lets an
# unprivileged user create a namespace) as an unprivileged run-as user, and writes every run's
# tpot to OUT/sandbox_gpu.md and the runs to OUT/sandbox_gpu.db.
#   bench/sandbox_gpu.sh PERFGATE OUT [ROUNDS]
set -euo pipefail
pg=$(realpath "${1:?usage: sandbox_gpu.sh PERFGATE OUT [ROUNDS]}")
out=$(mkdir -p "${2:?usage: sandbox_gpu.sh PERFGATE OUT [ROUNDS]}" && cd "$2" && pwd)
rounds=${3:-3}
root=$(cd "$(dirname "$0")/.." && pwd)
db="$out/sandbox_gpu.db"
scratch=$(mktemp -d /var/tmp/perfgate-sandbox-bench-XXXXXX) # only the report and the runs go to OUT
sweep="$scratch/sweep.toml"
cat >"$sweep" <<'TOML'
model = ["gpt2"]
dtype = ["bf16"]
batch-sizes = [1]
seq-lens = [512]
gen-tokens = 32
warmup = 3
reps = 10
device = "cuda"
cuda-graphs = ["on"]
TOML
report="$out/sandbox_gpu.md"
{
  echo "# The sandbox on a GPU runner ($(date -u +%Y-%m-%dT%H:%MZ))"
  echo
  echo "- GPU: $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null | head -1)"
  echo "- bubblewrap: $(bwrap --version 2>&1)"
  echo "- kernel: $(uname -r); unprivileged userns restricted by AppArmor:" \
    "$(cat /proc/sys/kernel/apparmor_restrict_unprivileged_userns 2>/dev/null || echo n/a)"
  echo "- command: bench/sandbox_gpu.sh PERFGATE OUT $rounds"
  echo
} >"$report"

# A commit to tag the runs with, outside /tmp (which the container replaces with its own).
repo=/opt/perfgate-sandbox-bench-repo
rm -rf "$repo" && mkdir -p "$repo" && chmod 755 "$repo"
git -C "$repo" init -q && git -C "$repo" -c user.name=bench -c user.email=bench@perfgate.test \
  commit -q --allow-empty -m "sandbox bench"
export PERFGATE_WORK="$scratch/work" PERFGATE_BIN=$pg PERFGATE_PASS_ENV=${PERFGATE_PASS_ENV:-} PERFGATE_SANDBOX=bwrap
# shellcheck source=../ci/scripts/lib.sh
source "$root/ci/scripts/lib.sh"
set +e
export SWEEP=$sweep # pg_bench copies it into the sandbox before every run

outside() {
  "$pg" run --config "$sweep" --repo "$repo" --db "$scratch/outside.db" --json "$scratch/outside.json" \
    --quiet >&2 && "$pg" import --db "$db" "$scratch/outside.json" | sed -n 's/^Imported run \([0-9]*\).*/\1/p'
}
inside() { # inside RUN_AS
  PERFGATE_RUN_AS=$1
  pg_sandbox_create || return 1
  # As the action does: a clone owned by the sandbox user, measured in its container.
  local src
  if ! src=$(pg_sandbox_clone "$repo" "$(git -C "$repo" rev-parse HEAD)" measured 2>"$scratch/inside.err") ||
    ! pg_bench "$pg" "$src" "$db" >/dev/null 2>>"$scratch/inside.err"; then
    tail -20 "$scratch/inside.err" >&2
    return 1
  fi
  pg_sandbox_destroy
  "$pg" runs --db "$db" | awk 'NR > 1 { id = $1 } END { print id }'
}
tpot() { "$pg" export --db "$db" --run "$1" --format csv | awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) if ($i == "tpot_ms") c = i } NR == 2 { print $c }'; }

users=(root)
if id perfgate-bench >/dev/null 2>&1 || useradd --system --no-create-home perfgate-bench 2>/dev/null; then
  users+=(perfgate-bench)
fi
echo "| round | where | as | run | tpot ms |" >>"$report"
echo "| --: | --- | --- | --: | --: |" >>"$report"
for ((r = 1; r <= rounds; r++)); do
  id=$(outside) && echo "| $r | outside | root | $id | $(tpot "$id") |" >>"$report"
  for u in "${users[@]}"; do
    as=$u
    [ "$u" = root ] && as=""
    if id=$(inside "$as"); then
      echo "| $r | bubblewrap | $u | $id | $(tpot "$id") |" >>"$report"
    else
      echo "| $r | bubblewrap | $u | failed: $(grep -v '^::' "$scratch/inside.err" | tail -1 | tr '|' '/') | |" >>"$report"
    fi
  done
done
cat "$report"
