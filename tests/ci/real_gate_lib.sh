#!/usr/bin/env bash
# Helpers of the real CPU gate runs (real_gate_test.sh, bench/real_aa.sh); sourced, never run.
# A temporary git repository with commits to tag runs, a worktree per commit, and runs of the
# real perfgate binary alternating base and head.

# real_repo DIR: a repository with commits A, B (no code change from A) and C, printed as
# "A B C" SHAs, and a worktree of each under DIR/wt-{A,B,C}.
real_repo() {
  local dir=$1 repo=$1/repo
  mkdir -p "$repo"
  git -C "$repo" init -q -b main
  git -C "$repo" config user.email ci@perfgate.test
  git -C "$repo" config user.name "perfgate ci"
  git -C "$repo" config commit.gpgsign false
  local name shas=()
  for name in A B C; do
    echo "$name" >"$repo/README.md"
    git -C "$repo" add -A
    git -C "$repo" commit -qm "commit $name"
    shas+=("$(git -C "$repo" rev-parse HEAD)")
  done
  local i=0
  for name in A B C; do
    git -C "$repo" worktree add -q --detach "$dir/wt-$name" "${shas[$i]}"
    i=$((i + 1))
  done
  echo "${shas[*]}"
}

# real_round PERFGATE SWEEP DB ROUND BASE_WT HEAD_WT [HEAD_ENV]: round number ROUND in the order
# ci/scripts/pr_bench.sh uses (odd rounds base then head, even rounds head then base).
# HEAD_ENV, space-separated VAR=VALUE words (the slow side of tests/common/slow_side.sh's
# slow_env), applies to the head's runs only.
real_round() {
  local pg=$1 sweep=$2 db=$3 round=$4 base_wt=$5 head_wt=$6 head_env=${7:-}
  local -a base_run=("$pg" run --config "$sweep" --repo "$base_wt" --db "$db" --quiet)
  local -a head_run=("$pg" run --config "$sweep" --repo "$head_wt" --db "$db" --quiet)
  # shellcheck disable=SC2206  # HEAD_ENV is a list of words on purpose
  if [ -n "$head_env" ]; then head_run=(env $head_env "${head_run[@]}"); fi
  if ((round % 2)); then
    "${base_run[@]}" >/dev/null
    "${head_run[@]}" >/dev/null
  else
    "${head_run[@]}" >/dev/null
    "${base_run[@]}" >/dev/null
  fi
}

# real_rounds PERFGATE SWEEP DB ROUNDS BASE_WT HEAD_WT [HEAD_ENV]: rounds 1..ROUNDS.
real_rounds() {
  local r
  for ((r = 1; r <= $4; r++)); do real_round "$1" "$2" "$3" "$r" "$5" "$6" "${7:-}"; done
}

# real_sequential_gate PERFGATE SWEEP DB REPO BASE HEAD ROUNDS MAX_ROUNDS BASE_WT HEAD_WT HEAD_ENV
#   COMPARE_ARGS...: the rule of ci/scripts/pr_more_rounds.sh: ROUNDS rounds, then one more while
# `compare --look K --max-looks N` says "continue", up to MAX_ROUNDS; prints the last look's
# compare output and returns its exit code.
real_sequential_gate() {
  local pg=$1 sweep=$2 db=$3 repo=$4 base=$5 head=$6 rounds=$7 max_rounds=$8 base_wt=$9
  local head_wt=${10} head_env=${11}
  shift 11
  local looks=$((max_rounds - rounds + 1)) look=1 round=$rounds json
  real_rounds "$pg" "$sweep" "$db" "$rounds" "$base_wt" "$head_wt" "$head_env"
  while ((look < looks)); do
    json=$("$pg" compare --db "$db" --repo "$repo" --base "$base" --head "$head" \
      --look "$look" --max-looks "$looks" --format json "$@") || true
    grep -q '"next": "continue"' <<<"$json" || break
    round=$((round + 1))
    look=$((look + 1))
    real_round "$pg" "$sweep" "$db" "$round" "$base_wt" "$head_wt" "$head_env"
  done
  echo "rounds per side: $round, look $look of $looks"
  "$pg" compare --db "$db" --repo "$repo" --base "$base" --head "$head" --look "$look" \
    --max-looks "$looks" "$@"
}
