"""Data sets for confrf: the paper's simulated models and embedded real data.

Simulated (with exact oracles for conditional coverage checks)
    :func:`make_sim`, :func:`make_toy`, :func:`simulate` return a
    :class:`SimulatedData`; :func:`sim_mean`, :func:`sim_sd`,
    :func:`toy_mean`, :func:`toy_sd` evaluate the true mean and noise sd at
    any ``X``; :func:`folded_normal_quantile` is the quantile of
    ``|b + s * eps|``.
Real (embedded, never downloaded)
    :func:`load_california`, :func:`load_diamonds`, :func:`load_star`.
Catalogue
    :func:`list_datasets`.

Sources and licences of the embedded files: ``README.md`` in this folder.
"""

from ._folded import folded_normal_quantile
from ._real import (
    DIAMONDS_LEVELS,
    STAR_FIRST_GRADE_COLUMNS,
    list_datasets,
    load_california,
    load_diamonds,
    load_star,
)
from ._sim_models import sim_mean, sim_sd, toy_mean, toy_sd
from ._simdata import SimulatedData
from ._simulate import make_sim, make_toy, simulate

__all__ = [
    "SimulatedData",
    "make_sim",
    "make_toy",
    "simulate",
    "sim_mean",
    "sim_sd",
    "toy_mean",
    "toy_sd",
    "folded_normal_quantile",
    "load_california",
    "load_diamonds",
    "load_star",
    "list_datasets",
    "DIAMONDS_LEVELS",
    "STAR_FIRST_GRADE_COLUMNS",
]
