"""The coverage statement of a calibration weighted for covariate shift.

It rewrites the calibrator's own statement (a :class:`confrf.calibrators.Guarantee`)
for the target population: exact with a known ratio, approximate with an
estimated one. It takes the statement as any frozen dataclass with ``kind``,
``certified`` and ``sentence`` fields and returns the same type, so this package
needs no import of the calibrators (which import it for the weighted rule).
"""

from __future__ import annotations

from dataclasses import Field, replace
from typing import Any, ClassVar, Protocol, TypeVar


class Statement(Protocol):
    """What :func:`shift_guarantee` reads and rewrites: a dataclass such as ``Guarantee``."""

    __dataclass_fields__: ClassVar[dict[str, Field[Any]]]

    @property
    def kind(self) -> str: ...

    @property
    def certified(self) -> bool: ...

    @property
    def sentence(self) -> str: ...


S = TypeVar("S", bound=Statement)


def shift_guarantee(base: S, alpha: float, estimated: bool) -> S:
    """The statement of a weighted calibration: for the target population, exact with a known ratio."""
    if not base.certified:
        return replace(
            base,
            certified=False,
            sentence=base.sentence + " The calibration is weighted for covariate shift (likelihood ratios), but the "
            "statement above is not certified in the first place.",
        )
    a = f"{1 - alpha:g}"
    if base.kind == "class-conditional":
        # within class k the target's law of x is w(x) times the calibration's, up to a constant (docs/theory.md)
        stmt, error, after = "P(Y in interval | Y = k) >= ", "E_k|w_hat - w| / 2", " for every class k"
        norm = "within class k"
    else:
        within = " within every group of the table" if base.kind == "groupwise" else ""
        stmt, error, after = f"P(Y in interval){within} >= ", "E|w_hat - w| / 2", ""
        norm = "on the calibration population"
    also = " (hence also marginally)" if base.kind in ("groupwise", "class-conditional") else ""
    if estimated:
        return replace(
            base,
            kind=f"{base.kind} (target, estimated ratio)",
            certified=False,
            sentence=f"Approximate: for a target-population row, {stmt}{a} - {error}{after}{also} "
            f"(Lei and Candes, 2021), w_hat the estimated likelihood ratio (normalized to mean 1 {norm}) and w the "
            "true one; exact only if w_hat = w. Needs covariate shift (P(Y | X) the same in both populations) and "
            "i.i.d. calibration points.",
        )
    return replace(
        base,
        kind=f"{base.kind} (target)",
        certified=True,
        sentence=f"For a target-population row, {stmt}{a}{after}{also} exactly in finite samples "
        "(weighted exchangeability, Tibshirani et al. 2019), if the likelihood ratio given is "
        "dP_target(x) / dP_calibration(x) up to a constant, P(Y | X) is the same in both populations "
        "(covariate shift) and the calibration points are i.i.d.",
    )
