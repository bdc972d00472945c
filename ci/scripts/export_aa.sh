#!/usr/bin/env bash
# The export A/A check (input export-aa-check; docs/OWN_MODEL_AOTI.md, "Proof: the export A/A
# check"); sourced by lib.sh, never run.
#
# A gate judges the code only if exporting the same commit twice gives the same package where it
# decides the speed. With PERFGATE_EXPORT_AA on, a pull request's merge-base is prepared a second
# time, in a fresh clone ("again"), exactly as the head is: uncached, in its own container, given
# the first prepare's tuning choices (PERFGATE_TUNING_FROM). The trusted perfgate_tuning.py then
# compares every AOTInductor package the two left by its sidecar's export facts (graph, kernel
# sources, tuning choices; the package bytes differ even between packages that run alike). A
# difference fails the job before any benchmark: the verdict would be the export's.

# Runs the check for the merge-base clone FIRST of commit SHA of REPO. Prints the summary's
# note; when a package differs, writes the summary's failure, prints why and returns 1.
pg_export_aa() {
  local repo=$1 sha=$2 first=$3 again out rc=0
  # The trusted copy: the pinned perfgate's (its harness) or, in a source checkout of the action,
  # the one in its tree.
  local tool="${PERFGATE_HARNESS_DIR:-}/perfgate_tuning.py"
  [ -f "$tool" ] || tool="$PG_SCRIPTS/../../python/perfgate_tuning.py"
  [ -f "$tool" ] ||
    pg_die "input 'export-aa-check': no perfgate_tuning.py beside the trusted perfgate (PERFGATE_HARNESS_DIR=${PERFGATE_HARNESS_DIR:-}) or in the action's tree: it compares the exports"
  again=$(pg_sandbox_clone "$repo" "$sha" again)
  pg_log "export A/A: preparing the merge-base ${sha:0:12} a second time in $again"
  pg_prepare "$again" || pg_die "export A/A: the merge-base's second prepare failed"
  # Read as the sandbox user: it reaches nothing that user could not (a link planted in a clone).
  out=$(pg_as_sandbox_user "$PG_SANDBOX" "${PERFGATE_PYTHON:-python3}" "$tool" compare-exports \
    "$first" "$again" 2>&1) || rc=$?
  pg_as_sandbox_user "$PG_SANDBOX" rm -rf "$again" "$PG_SANDBOX/side-again" || true
  out=${out//::/: :} # package names are the project's: no workflow command in them is honoured
  pg_log "export A/A: ${out//$'\n'/; }"
  case $rc in
    0) echo "Export A/A: the merge-base prepared twice left the same packages (${out//$'\n'/; })" ;;
    2) echo "Export A/A: nothing compared (${out//$'\n'/; })" ;;
    *)
      {
        echo "### ❌ perfgate: export A/A failed: the merge-base exported twice differs"
        echo
        echo "Prepared twice, the merge-base \`${sha:0:12}\` left packages that differ in what decides"
        echo "their speed, so a gate of this pull request would judge the export, not the code"
        echo "(docs/OWN_MODEL_AOTI.md, \"Exports that do not decide the verdict\"):"
        echo
        echo '```'
        echo "$out"
        echo '```'
      } | pg_summary
      echo "two exports of the merge-base ${sha:0:12} differ (${out//$'\n'/; })"
      return 1
      ;;
  esac
}
