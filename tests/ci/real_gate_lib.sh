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

# real_rounds PERFGATE SWEEP DB ROUNDS BASE_WT HEAD_WT [HEAD_ENV]: alternating rounds in the
# order ci/scripts/pr_bench.sh uses (base head, head base, base head, ...).
# HEAD_ENV (e.g. MKL_ENABLE_INSTRUCTIONS=SSE4_2) applies to the head's runs only.
real_rounds() {
  local pg=$1 sweep=$2 db=$3 rounds=$4 base_wt=$5 head_wt=$6 head_env=${7:-}
  local r
  one_base() { "$pg" run --config "$sweep" --repo "$base_wt" --db "$db" --quiet >/dev/null; }
  one_head() {
    if [ -n "$head_env" ]; then
      env "$head_env" "$pg" run --config "$sweep" --repo "$head_wt" --db "$db" --quiet >/dev/null
    else
      "$pg" run --config "$sweep" --repo "$head_wt" --db "$db" --quiet >/dev/null
    fi
  }
  for ((r = 1; r <= rounds; r++)); do
    if ((r % 2)); then
      one_base
      one_head
    else
      one_head
      one_base
    fi
  done
}
