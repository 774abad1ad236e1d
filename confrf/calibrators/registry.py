"""Registry of calibration methods: name -> factory and method-specific options.

A method module registers itself once; the estimator and the formula API look
methods up here, so adding a method never touches their code.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from ..exceptions import InputError
from .base import Calibrator


@dataclass(frozen=True)
class MethodSpec:
    """How to build a calibrator.

    Attributes
    ----------
    name : str
        Method name as passed to ``method=``.
    factory : callable
        ``factory(estimator, options, seed) -> Calibrator``; ``estimator`` gives
        the shared settings (forest sizes, ``n_jobs``), ``options`` the
        method-specific ones with defaults filled in.
    options : mapping
        Method-specific option names and their defaults.
    title : str
        Human-readable name for summaries.
    needs_training : bool or callable
        The calibrator learns from the training part: ``fit`` then keeps the
        training rows and their out-of-fold scores (option ``cv`` folds) and
        hands them to the calibrator's ``set_reference(X, scores)`` hook. A
        callable decides from the method's options (:meth:`uses_training`).
    settings : frozenset of str or callable
        The estimator's forest settings (names in :data:`FOREST_SETTINGS`)
        that the method reads; a callable decides from the method's options
        (:meth:`reads`). Another one set away from its default draws an
        ``UnusedSettingWarning``, so that it is never silently ignored.
    classification : bool
        Offered for a class-label response too (the classification family's
        methods: ``confrf.calibrators.registry.class_methods()``).
    mondrian_title : str
        Title for summaries when a classification fit's groups are the class
        label (class-conditional, Mondrian); empty when that does not apply.
    shift : bool
        The method's calibrator weights for covariate shift (its default
        form; a variant may refuse, e.g. ``guarantee="pac"``): the methods
        named by :meth:`confrf.calibrators.Calibrator.shift_refusal`.
    fits_models : bool
        The method fits the base model itself, on folds or bootstrap samples
        of the training rows, and calibrates on their out-of-fold scores
        (CV+, jackknife+, J+aB): ``fit(X, y)`` does the whole job through the
        calibrator's ``cross_fit`` hook (:class:`confrf.calibrators.Calibrator`),
        no calibration set is used, and new rows get bounds from its
        ``predict_rows`` instead of thresholds.
    """

    name: str
    #: the estimator is a ConformalRegressor or a ConformalClassifier, which import this module: not named here
    factory: Callable[[Any, dict[str, Any], int | None], Calibrator]
    options: Mapping[str, Any] = field(default_factory=dict)
    title: str = ""
    needs_training: bool | Callable[[Mapping[str, Any]], bool] = False
    settings: frozenset[str] | Callable[[Mapping[str, Any]], frozenset[str]] = frozenset()
    fits_models: bool = False
    classification: bool = False
    mondrian_title: str = ""
    shift: bool = False

    def reads(self, options: Mapping[str, Any]) -> frozenset[str]:
        """The forest settings the method reads, given the filled options."""
        return frozenset(self.settings(options)) if callable(self.settings) else frozenset(self.settings)

    def uses_training(self, options: Mapping[str, Any]) -> bool:
        """Whether ``fit`` must keep the training part with out-of-fold scores, given the filled options."""
        return bool(self.needs_training(options)) if callable(self.needs_training) else self.needs_training


#: the estimator settings that shape the localizer forest and the localizer/conformal split
FOREST_SETTINGS = frozenset(
    {"honest", "localizer_size", "n_estimators", "min_samples_leaf", "max_features", "max_depth"}
)

METHODS: dict[str, MethodSpec] = {}
#: (method, guarantee) -> factory of a variant built by another module (e.g. "lcp-rf" with guarantee="pac")
VARIANTS: dict[tuple[str, str], Callable[..., Calibrator]] = {}


def register(spec: MethodSpec) -> MethodSpec:
    """Add a method (its name must be new)."""
    if spec.name in METHODS:
        raise ValueError(f"method {spec.name!r} is already registered")
    METHODS[spec.name] = spec
    return spec


def register_variant(method: str, guarantee: str, factory: Callable[..., Calibrator]) -> None:
    """Let ``method`` with ``guarantee=...`` be built by ``factory(est, opts, seed)`` from another module."""
    if (method, guarantee) in VARIANTS:
        raise ValueError(f"variant {guarantee!r} of method {method!r} is already registered")
    VARIANTS[(method, guarantee)] = factory


def get_variant(method: str, guarantee: str) -> Callable[..., Calibrator]:
    """The factory registered for ``method`` with ``guarantee`` (a KeyError if no module registered one)."""
    return VARIANTS[(method, guarantee)]


def class_methods() -> list[str]:
    """The methods offered for a class-label response (``classification=True``), sorted."""
    return sorted(name for name, spec in METHODS.items() if spec.classification)


def group_methods() -> list[str]:
    """The methods that calibrate within groups (they have a ``groups`` option), in registration order."""
    return [name for name, spec in METHODS.items() if "groups" in spec.options]


def shift_methods() -> list[str]:
    """The methods whose calibrators weight for covariate shift (``shift=True``), sorted."""
    return sorted(name for name, spec in METHODS.items() if spec.shift)


def get_method(name: str) -> MethodSpec:
    """The spec of ``name`` or an error listing the methods."""
    try:
        return METHODS[name]
    except (KeyError, TypeError):
        raise InputError(f"unknown method {name!r}; choose one of {sorted(METHODS)}.") from None


def method_options(name: str, options: Mapping[str, Any] | None) -> dict[str, Any]:
    """Fill defaults and refuse options the method does not know."""
    spec = get_method(name)
    if options is not None and not isinstance(options, Mapping):
        raise InputError(
            f"options must be a dict of method options, e.g. options={{'guarantee': 'pac'}}, "
            f"got {type(options).__name__}."
        )
    options = dict(options or {})
    unknown = sorted(set(options) - set(spec.options))
    if unknown:
        own = f"its own options are {sorted(spec.options)}" if spec.options else "it has no options of its own"
        raise InputError(f"option(s) {unknown} do not apply to method {name!r}; {own}.")
    return {**spec.options, **options}


def unused_settings_message(name: str, options: Mapping[str, Any], changed: Mapping[str, Any]) -> str | None:
    """What to tell of the forest settings moved from their defaults (``changed``) that method ``name`` ignores.

    None if there is none.
    """
    spec = get_method(name)
    unused = {k: v for k, v in changed.items() if k not in spec.reads(options)}
    if not unused:
        return None
    said = ", ".join(f"{k}={v!r}" for k, v in sorted(unused.items()))
    verb, it = ("has", "it") if len(unused) == 1 else ("have", "them")
    reads = sorted(spec.reads(options))
    if reads:
        return f"{said} {verb} no effect with method {name!r} and these options (it reads only {reads}); drop {it}."
    users = sorted(m for m, s in METHODS.items() if set(unused) <= s.reads(s.options))
    return (
        f"{said} {verb} no effect with method {name!r}, which grows no localizer forest; drop {it}, or choose "
        f"a method that uses {it}: {users}."
    )
