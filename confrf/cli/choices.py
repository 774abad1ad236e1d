"""The choices of --method, --score and --model: the names in the library's registries and shortcut lists.

A given value is checked against the registry itself, so a method or score
that another module registered is accepted. ``--help`` lists the live
registry once it is loaded; before that (``confrf fit --help`` in a fresh
process) it reads the built-in names from the registration lines of the
package's own files (``register(MethodSpec("name", ...))`` in
``calibrators/``, ``register_score(ScoreSpec("name", ...))`` in ``scores/``),
and --model's from the shortcut tuples of the model modules (:data:`_MODEL_LISTS`),
so that it imports no numerical library and no list is written twice.
"""

from __future__ import annotations

import ast
import re
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

PACKAGE = Path(__file__).resolve().parent.parent
#: where the model shortcuts are named (they are not registered: the modules build them by name): file, tuple or dict
_MODEL_LISTS = (
    ("models.py", "SHORTCUTS"),
    ("scores/quantile.py", "QUANTILE_SHORTCUTS"),
    ("classification/models.py", "CLASSIFIER_SHORTCUTS"),
)
#: a registration at the start of a line (not an example in a docstring): its name, and the rest of the call
_METHOD_LINE = re.compile(r'^register\(\s*MethodSpec\(\s*"([^"]+)"', re.MULTILINE)
_SCORE_LINE = re.compile(r'^register_score\(\s*ScoreSpec\(\s*"([^"]+)"([^\n]*)', re.MULTILINE)
_FAMILY = re.compile(r'family\s*=\s*"([a-z]+)"')
#: the families of scores in the order --score lists them
FAMILIES = ("regression", "classification")


def _sources(folder: str) -> Iterator[str]:
    for path in sorted((PACKAGE / folder).glob("*.py")):
        yield path.read_text(encoding="utf-8")


def builtin_methods() -> tuple[str, ...]:
    """The methods registered by the package's own files, sorted, read without importing them."""
    return tuple(sorted({m.group(1) for text in _sources("calibrators") for m in _METHOD_LINE.finditer(text)}))


def builtin_scores() -> dict[str, str]:
    """Score name -> family, as registered by the package's own files, read without importing them."""
    out = {}
    for text in _sources("scores"):
        for m in _SCORE_LINE.finditer(text):
            family = _FAMILY.search(m.group(2))
            out[m.group(1)] = family.group(1) if family else "regression"  # ScoreSpec's default family
    return out


def builtin_models() -> tuple[str, ...]:
    """The model shortcut names of both families (regressors, quantile pairs, classifiers), read without importing."""
    names: dict[str, None] = {}
    for file, variable in _MODEL_LISTS:
        tree = ast.parse((PACKAGE / file).read_text(encoding="utf-8"))
        found = [
            node.value
            for node in tree.body
            if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == variable for t in node.targets)
        ]
        if len(found) != 1:
            raise LookupError(f"confrf/{file} should name its model shortcuts once, in {variable} = ...")
        names.update(dict.fromkeys(ast.literal_eval(found[0])))
    return tuple(names)


#: the choices of --model
MODEL_NAMES = builtin_models()


def ordered_scores(families: dict[str, str]) -> tuple[str, ...]:
    """Score names by family (regression first), sorted within each family."""
    return tuple(name for family in FAMILIES for name in sorted(n for n, f in families.items() if f == family))


class _Registered(Sequence[str]):
    """argparse choices backed by a registry: membership asks the registry (loading the library)."""

    #: the module holding the registry once the library is loaded, and its dictionary
    module = ""
    attribute = ""

    def _live(self) -> Any:
        registry = sys.modules.get(self.module)
        return None if registry is None else getattr(registry, self.attribute)

    def _names(self) -> tuple[str, ...]:
        raise NotImplementedError

    def _load(self) -> Any:
        raise NotImplementedError

    def __contains__(self, name: object) -> bool:
        return name in self._load()

    def __iter__(self) -> Iterator[str]:
        return iter(self._names())

    def __len__(self) -> int:
        return len(self._names())

    def __getitem__(self, i: Any) -> Any:
        return self._names()[i]


class RegisteredMethods(_Registered):
    """The choices of --method: the names of :data:`confrf.calibrators.METHODS`, sorted."""

    module, attribute = "confrf.calibrators.registry", "METHODS"

    def _names(self) -> tuple[str, ...]:
        live = self._live()
        return builtin_methods() if live is None else tuple(sorted(live))

    def _load(self) -> Any:
        from ..calibrators import METHODS  # every built-in method registers itself on this import

        return METHODS


class RegisteredScores(_Registered):
    """The choices of --score: the names of :data:`confrf.scores.SCORES`, regression's first, each family sorted."""

    module, attribute = "confrf.scores.registry", "SCORES"

    def _names(self) -> tuple[str, ...]:
        live = self._live()
        if live is None:
            return ordered_scores(builtin_scores())
        return ordered_scores({name: spec.family for name, spec in live.items()})

    def _load(self) -> Any:
        from ..scores import SCORES  # every built-in score registers itself on this import

        return SCORES
