#!/usr/bin/env bash
# Run the confrf benchmarks from the repository root.
#   bash benchmarks/run_all.sh                 # default run (~30 s on 2 idle cores)
#   bash benchmarks/run_all.sh --repeats 5     # extra arguments go to every script
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
