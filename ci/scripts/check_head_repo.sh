#!/usr/bin/env bash
# Gate job, first step after the checkouts: a pull request from a fork runs only in the
# approval-protected environment (perfgate-fork-pr, required reviewers), never in the plain one.
# GitHub enforces the approval before the job starts; this step makes the workflow's own choice
# of environment explicit and fails closed when the two disagree.
#   HEAD_REPO      github.event.pull_request.head.repo.full_name
#   ENVIRONMENT    the environment the job runs in
#   GITHUB_REPOSITORY   set by Actions
set -euo pipefail
: "${HEAD_REPO:?HEAD_REPO is not set}" "${ENVIRONMENT:?ENVIRONMENT is not set}"
: "${GITHUB_REPOSITORY:?GITHUB_REPOSITORY is not set}"
if [ "$HEAD_REPO" = "$GITHUB_REPOSITORY" ]; then
  echo "perfgate-ci: head repository $HEAD_REPO is this repository"
elif [ "$ENVIRONMENT" = perfgate-fork-pr ]; then
  echo "perfgate-ci: fork pull request from $HEAD_REPO, approved in the $ENVIRONMENT environment"
else
  echo "::error title=perfgate::fork pull request from $HEAD_REPO outside the approval environment ($ENVIRONMENT)"
  exit 2
fi
