#!/usr/bin/env bash
# Run every maintained confrf benchmark from the repository root (the exploration scripts of
# benchmarks/explore/ are not run).
#   bash benchmarks/run_all.sh                 # the documented settings (long: up to 10,000,000-row jobs; some rewrite docs/benchmarks/)
#   bash benchmarks/run_all.sh --quick         # every script at smoke-test size (about half an hour on 2 busy cores), writes no docs
#   bash benchmarks/run_all.sh --repeats 5     # extra arguments go to bench_predict, bench_pac, bench_groups, bench_baselines
#   BENCH_PEERS_ARGS="--seeds 10" bash benchmarks/run_all.sh   # a script's own options: BENCH_<NAME>_ARGS
# Builds the Cython kernels in place first if they are missing.
set -euo pipefail
cd "$(dirname "$0")/.."
if ! PYTHONPATH=. python -c "import confrf._kernels" 2>/dev/null; then
    python setup.py build_ext --inplace
fi
quick=0
if [[ "${1:-}" == "--quick" ]]; then
    quick=1
    shift
fi

# run NAME DEFAULT_ARGS QUICK_ARGS [shared args...]: BENCH_<NAME>_ARGS, when set, replaces both
run() {
    local name=$1 full=$2 small=$3
    shift 3
    local var
    var="BENCH_$(echo "${name#bench_}" | tr '[:lower:]' '[:upper:]')_ARGS"
    local own=$full
    if ((quick)); then own=$small; fi
    own=${!var-$own}
    echo "== $name $own $*"
    # shellcheck disable=SC2086  # word splitting of the options is intended
    PYTHONPATH=. python "benchmarks/$name.py" $own "$@"
}

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# timing and sanity benchmarks of the estimators; they share the size options given to this script
run bench_predict "" "--n-train 500 --n-cal 500 --n-test 200 --repeats 1 --out $tmp" "$@"
run bench_pac "" "--n-train 500 --n-test 500 --draws 2 --grid-size 5 --out $tmp --docs=" "$@"
run bench_groups "" "--n-train 500 --n-cal 1000 --n-test 500 --repeats 1 --out $tmp" "$@"
run bench_baselines "" "--n-train 300 --n-cal 300 --n-test 300 --repeats 1 --out $tmp" "$@"
run bench_class_predict "" "--n-test 20000"
# the peer comparisons (docs/benchmarks/); their full runs rewrite the pages
run bench_peers "" "--quick --datasets toy --n-sim 1500 --wsc-directions 50 --out $tmp/peers"
run bench_slab_at_coverage "" "--datasets toy --seeds 2 --alphas 0.1 0.065 --n-sim 2200 --wsc-directions 50 --out $tmp"
run bench_small "" "--quick --out $tmp/small"
run bench_classification "" "--quick"
run bench_shift "--seeds 10 --out docs/benchmarks/shift.md" \
    "--seeds 2 --n-source 800 --n-target 200 --cc-seeds 0 --settings sim+ star- --out $tmp/shift.md"
# exact conditional coverage (issue 36): every (model, n_cal, seed) cell, appended to benchmarks/condcov_results.jsonl
run bench_condcov "" "--models toy --n-cal 500 --seeds 1 --cc-points 0 --n-eval 200 --out $tmp/condcov.jsonl"
# p-values and predictive distributions (issue 39)
run bench_distribution "--out bench_distribution.md" \
    "--suite pvalues --datasets sim --seeds 1 --n-sim 2000 --no-mapie --out $tmp/distribution.md"
# 100,000-point jobs, each in its own process (long at the documented sizes); quick: the quality suite, one seed
run bench_scale "" "--quick --suite quality --seeds 1 --out $tmp/scale"
# the threshold kernel alone per neighbour on one forest, each gather (issue 40; long at the documented 950,000 points)
run kernel_scale "" "--n-conf 1000 9500 --n-grow 1000 --leaf 5 --rows 50 --reps 1 --cache $tmp/kernel_scale"
