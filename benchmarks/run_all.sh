#!/usr/bin/env bash
# Run the confrf benchmarks from the repository root.
#   bash benchmarks/run_all.sh                 # everything (~12 min on 2 idle cores: peers ~6, scale ~4)
#   bash benchmarks/run_all.sh --repeats 5     # extra arguments go to every script but bench_peers and bench_scale
#   BENCH_PEERS_ARGS="--quick" BENCH_SCALE_ARGS="--quick" bash benchmarks/run_all.sh   # their own options
# Builds the Cython kernels in place first if they are missing.
set -euo pipefail
cd "$(dirname "$0")/.."
if ! PYTHONPATH=. python -c "import confrf._kernels" 2>/dev/null; then
    python setup.py build_ext --inplace
fi
for script in bench_predict bench_pac bench_groups bench_baselines; do
    echo "== $script"
    PYTHONPATH=. python "benchmarks/$script.py" "$@"
done
# bench_peers has options of its own (--seeds, --datasets, --quick, ...), so it does not take the
# arguments above; pass its own through BENCH_PEERS_ARGS, e.g. BENCH_PEERS_ARGS="--quick"
echo "== bench_peers"
# shellcheck disable=SC2086  # word splitting of the options is intended
PYTHONPATH=. python benchmarks/bench_peers.py ${BENCH_PEERS_ARGS:-}
# bench_classification has options of its own too (--seeds, --datasets, --quick)
echo "== bench_classification"
# shellcheck disable=SC2086
PYTHONPATH=. python benchmarks/bench_classification.py ${BENCH_CLASSIFICATION_ARGS:-}
# bench_scale runs 100,000-point jobs (~4 min); BENCH_SCALE_ARGS="--quick" for a short run
echo "== bench_scale"
# shellcheck disable=SC2086
PYTHONPATH=. python benchmarks/bench_scale.py ${BENCH_SCALE_ARGS:-}
