"""Issue 36, sixth round: what the forest tuning's held-out loss says about candidates that exact CC separates.

Needs ``tuning_experiments.diff`` applied (``git apply benchmarks/explore/tuning_experiments.diff``): it adds the
tuning-only candidate scale "normalized" (split conformal on V / sigma(x), sigma the tuning forest's prediction)
and ``tuning.SCALE_FREE_LOSS`` (each test point's loss divided by a reference scale). For bench_condcov's draws of
the training rows, the training part's out-of-fold scores are tuned as LCP-RF's default tunes them when the
training check passes (``--conformal`` conformal points), and the four best candidates are printed with their
mean held-out loss (lower is better; the first candidate is the sqrt rule's baseline).

    git apply benchmarks/explore/tuning_experiments.diff
    OMP_NUM_THREADS=1 python benchmarks/explore/condcov_tuning_choices.py sim:1000 multi:1000 toy:500 [--scale-free]
    git apply -R benchmarks/explore/tuning_experiments.diff
"""

from __future__ import annotations

import argparse
import math
import sys
from pathlib import Path

import numpy as np
from sklearn.model_selection import KFold, cross_val_predict

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE.parent.parent))

import bench_condcov as bc  # noqa: E402
from peerbench.data import base_model  # noqa: E402

from confrf.localizers import tuning  # noqa: E402
from confrf.localizers.forest import ForestLocalizer, auto_min_samples_leaf  # noqa: E402
from confrf.localizers.screening import SCREENED  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("cells", nargs="+", help="MODEL:N_CAL, e.g. sim:1000")
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument("--scale-free", action="store_true", help="tuning.SCALE_FREE_LOSS = True")
    args = ap.parse_args()
    if not hasattr(tuning, "SCALE_FREE_LOSS"):
        raise SystemExit("apply benchmarks/explore/tuning_experiments.diff first (see the docstring)")
    tuning.SCALE_FREE_LOSS = args.scale_free
    for spec in args.cells:
        name, n_cal = spec.split(":")[0], int(spec.split(":")[1])
        model = bc.MODEL_SPECS[name]
        for seed in range(args.seeds):
            rng = np.random.default_rng([seed, n_cal, bc.MODELS.index(name)])
            X, y = model.draw(rng, bc.N_TRAIN)
            oof = cross_val_predict(base_model(seed), X, y, cv=KFold(5, shuffle=True, random_state=seed))
            top = auto_min_samples_leaf(X.shape[0])
            n_conformal = n_cal - math.ceil(10 / bc.ALPHA)  # the check rows are not conformal points
            tun = tuning.tune_forest(
                X,
                np.abs(y - oof),
                alpha=bc.ALPHA,
                leaves=tuning.leaf_candidates(X.shape[0], top),
                baseline=top,
                max_features=[1.0, 1 / 3, SCREENED],
                scales=["none", "forest", "normalized"],
                forest_kwargs={},
                random_state=seed,
                n_jobs=1,
                conformal_ratio=n_conformal / X.shape[0],
                pooled=True,
                make_localizer=ForestLocalizer,
            )
            best = sorted(zip(tun.candidates, tun.scores), key=lambda cs: cs[1])[:4]
            shown = ", ".join(f"{c}: {s:.4f}" for c, s in best)
            print(f"{name} {n_cal:,} seed {seed}: chosen {tun.chosen}; baseline {tun.scores[0]:.4f}; best {shown}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
