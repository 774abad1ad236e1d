#!/usr/bin/env bash
# Run the confrf benchmarks from the repository root.
#   bash benchmarks/run_all.sh                 # default run (~30 s on 2 idle cores)
#   bash benchmarks/run_all.sh --repeats 5     # extra arguments go to bench_predict.py
# Builds the Cython kernels in place first if they are missing.
set -euo pipefail
cd "$(dirname "$0")/.."
if ! PYTHONPATH=. python -c "import confrf._kernels" 2>/dev/null; then
    python setup.py build_ext --inplace
fi
PYTHONPATH=. python benchmarks/bench_predict.py "$@"
