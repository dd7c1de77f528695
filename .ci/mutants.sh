#!/usr/bin/env bash
# The mutation check (issue 29): breaks the product on purpose, one hand-made mutant at a time, and runs the tests that
# judge the promise it breaks. A mutant is killed when at least one of them fails; one that every test survives means
# the suite would let that bug land, and the check fails.
#
#   .ci/mutants.sh                 every mutant in .ci/mutants/, after a baseline run of their tests on the product as is
#   .ci/mutants.sh 2 wrong-owner   only the mutants whose file name contains one of the words
#   MUTANTS_BASELINE=0 .ci/mutants.sh   no baseline run (when it is known green)
#   MUTANTS_EVERY_FAILURE=1 .ci/mutants.sh   every named test runs to its end under each mutant, to list all that
#                                            fail (by default surefire stops at the first failure: one kill is enough,
#                                            and a broken product makes the judges wait out their bounds)
#
# Each .ci/mutants/*.patch is a `git diff` of src/main with a preamble that git apply ignores: `Mutant:` says what it
# breaks, `Tests:` the surefire classes (or Class#method) to run, `ITs:` the failsafe ones, against the packaged jar.
# The baseline matters: a test that fails on the product as is (a missing prerequisite: CI=true is set so that one
# fails rather than skips) would otherwise pass for a kill. Extra Maven flags: MUTANTS_MAVEN_FLAGS (e.g. "-o").
# The working tree's src/main must be clean; every mutant is reverted on exit, however the script ends.
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
ROOT="$(pwd)"
export CI="${CI:-true}"
read -r -a maven_flags <<<"${MUTANTS_MAVEN_FLAGS:-}"
log_dir="$ROOT/target/mutants"

step() { echo "==> [mutants] $*"; }

if ! git diff --quiet -- src/main || ! git diff --cached --quiet -- src/main; then
  step "src/main has uncommitted changes: commit or stash them first (every mutant is applied to, and reverted from, a clean tree)"
  exit 2
fi

patches=()
for patch in .ci/mutants/*.patch; do
  if (($# == 0)); then
    patches+=("$patch")
    continue
  fi
  for word in "$@"; do
    [[ "$(basename "$patch")" == *"$word"* ]] && { patches+=("$patch"); break; }
  done
done
if ((${#patches[@]} == 0)); then
  step "no mutant in .ci/mutants/ matches: $*"
  exit 2
fi

field() { sed -n "s/^$1:[[:space:]]*//p" "$2" | head -n1; }
# "A B#m" -> "A,B#m"
commas() { tr -s ' ' ',' <<<"$1" | sed 's/^,//; s/,$//'; }

applied=""
maven=""
revert() {
  if [[ -n "$maven" ]]; then
    kill -TERM "$maven" 2>/dev/null && wait "$maven" 2>/dev/null || true
    maven=""
  fi
  if [[ -n "$applied" ]]; then
    git apply -R "$applied" && step "reverted $(basename "$applied")"
    applied=""
  fi
}
trap revert EXIT
# Maven runs in the background and is waited for, so that an interrupt reaches this trap at once (bash runs a trap
# only once its foreground command ended): Maven is stopped, and the mutant reverted.
trap 'exit 130' INT TERM
fail_fast=(-Dsurefire.skipAfterFailureCount=1 -Dfailsafe.skipAfterFailureCount=1)
[[ "${MUTANTS_EVERY_FAILURE:-0}" == 1 ]] && fail_fast=()

# Runs the named tests; leaves in $failed one line per failed test ("Class#method: first line of the message"), and
# in $outcome 0, 3 when Maven failed and no test did (the mutant does not compile, the build broke) or 4 when no test
# ran. Failed tests are what counts, whatever Maven's status: failsafe's verify goal may fail on its own once a test did.
run_tests() {
  local tests="$1" its="$2" log="$3"
  local goal=test
  [[ -n "$its" ]] && goal=verify
  rm -rf target/surefire-reports target/failsafe-reports
  failed="" outcome=0
  ./mvnw -B "${maven_flags[@]}" "${fail_fast[@]}" -Dtest="${tests:-none}" -Dit.test="${its:-none}" \
    -Dsurefire.failIfNoSpecifiedTests=false -Dfailsafe.failIfNoSpecifiedTests=false \
    -Dmaven.test.failure.ignore=true "$goal" </dev/null >"$log" 2>&1 &
  maven=$!
  local built=0
  wait "$maven" || built=3
  maven=""
  failed="$(python3 - target/surefire-reports target/failsafe-reports <<'EOF'
import glob, sys, xml.etree.ElementTree as ET
ran = 0
for folder in sys.argv[1:]:
    for report in sorted(glob.glob(folder + "/TEST-*.xml")):
        for case in ET.parse(report).getroot().iter("testcase"):
            ran += 1
            for kind in ("failure", "error"):
                for bad in case.findall(kind):
                    message = (bad.get("message") or bad.get("type") or kind).strip().splitlines()
                    first = message[0] if message else kind
                    print(f"{case.get('classname', '?').rsplit('.', 1)[-1]}#{case.get('name', '?')}: {first[:240]}")
sys.exit(0 if ran else 4)
EOF
)" || outcome=$?
  if [[ -z "$failed" ]] && ((built != 0)); then
    outcome=3
  fi
}

mkdir -p "$log_dir"

if [[ "${MUTANTS_BASELINE:-1}" != 0 ]]; then
  all_tests="" all_its=""
  for patch in "${patches[@]}"; do
    all_tests+=" $(field Tests "$patch")"
    all_its+=" $(field ITs "$patch")"
  done
  all_tests="$(commas "$(tr ' ' '\n' <<<"$all_tests" | sort -u | tr '\n' ' ')")"
  all_its="$(commas "$(tr ' ' '\n' <<<"$all_its" | sort -u | tr '\n' ' ')")"
  step "baseline: the product as is, tests ${all_tests:-none}, ITs ${all_its:-none}"
  run_tests "$all_tests" "$all_its" "$log_dir/baseline.log"
  if ((outcome != 0)); then
    step "the baseline build failed or ran no test (log: $log_dir/baseline.log)"
    exit 2
  fi
  if [[ -n "$failed" ]]; then
    step "the baseline is not green, so no failure below could be told from a kill:"
    sed 's/^/    /' <<<"$failed"
    exit 2
  fi
fi

results=()
survivors=0
for patch in "${patches[@]}"; do
  name="$(basename "$patch" .patch)"
  tests="$(commas "$(field Tests "$patch")")"
  its="$(commas "$(field ITs "$patch")")"
  step "$name: $(field Mutant "$patch")"
  git apply "$patch"
  applied="$patch"
  started=$(date +%s)
  run_tests "$tests" "$its" "$log_dir/$name.log"
  status=$outcome
  revert
  rm -rf "${log_dir:?}/$name-reports" && mkdir -p "$log_dir/$name-reports"
  cp -r target/surefire-reports target/failsafe-reports "$log_dir/$name-reports/" 2>/dev/null || true
  took=$(( $(date +%s) - started ))
  if ((status == 3)); then
    results+=("$name: BROKEN, the build failed with the mutant in (log: target/mutants/$name.log)")
    survivors=$((survivors + 1))
  elif ((status == 4)); then
    results+=("$name: BROKEN, no test ran: check its Tests:/ITs: names (log: target/mutants/$name.log)")
    survivors=$((survivors + 1))
  elif [[ -z "$failed" ]]; then
    results+=("$name: SURVIVED ${tests:+$tests }${its:+$its }(${took} s)")
    survivors=$((survivors + 1))
  else
    results+=("$name: killed by $(wc -l <<<"$failed") test(s) in ${took} s (reports: target/mutants/$name-reports):")
    while IFS= read -r line; do results+=("    $line"); done <<<"$failed"
  fi
  step "$name: $( ((status == 0)) && [[ -n "$failed" ]] && echo killed || echo "not killed") in ${took} s"
done

step "results:"
printf '%s\n' "${results[@]}"
if ((survivors > 0)); then
  step "$survivors mutant(s) not killed"
  exit 1
fi
step "every mutant killed"
