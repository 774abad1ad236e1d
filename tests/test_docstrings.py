"""The shared docstring pieces (confrf._docstrings): every slot is filled and a wrong one is refused."""

import importlib
import inspect
import pkgutil
import re

import pytest

import confrf
from confrf._docstrings import PIECES, fill

_SLOT = re.compile(r"\{\{\w+\}\}")


def _public_docstrings():
    for info in pkgutil.walk_packages(confrf.__path__, "confrf."):
        if "._kernels" in info.name or info.name.endswith(("__main__", "._docstrings")):  # fill shows a slot
            continue
        module = importlib.import_module(info.name)
        for _, obj in inspect.getmembers(module, lambda o: inspect.isclass(o) or inspect.isfunction(o)):
            if getattr(obj, "__module__", None) != module.__name__:
                continue
            yield obj.__qualname__, obj.__doc__ or ""
            if inspect.isclass(obj):
                for name, member in vars(obj).items():
                    target = getattr(member, "fget", member)
                    yield f"{obj.__qualname__}.{name}", getattr(target, "__doc__", None) or ""


def test_no_docstring_keeps_an_unfilled_slot():
    left = [name for name, doc in _public_docstrings() if _SLOT.search(doc)]
    assert left == [], f"docstrings with a {{{{piece}}}} slot but no @fill: {left}"


def test_fill_writes_the_piece_out_at_the_slot_indent():
    @fill
    def f():
        """Head.

        Examples
        --------
        {{wine_rf}}
        """

    lines = f.__doc__.splitlines()
    start = lines.index("        --------") + 1
    expected = PIECES["wine"].splitlines() + PIECES["wine_rf"].splitlines()[1:]
    assert [line.strip() for line in lines[start : start + len(expected)]] == expected
    assert all(line.startswith("        >>> ") for line in lines[start : start + len(expected)])
    assert "{{" not in f.__doc__


def test_fill_refuses_an_unknown_piece_and_a_docstring_without_one():
    def unknown():
        """{{no_such_piece}}"""

    def plain():
        """No slot."""

    with pytest.raises(KeyError, match="no_such_piece"):
        fill(unknown)
    with pytest.raises(ValueError, match="names no piece"):
        fill(plain)


def test_fill_substitutes_the_fields_a_slot_gives_and_refuses_a_missing_one():
    @fill
    def f():
        """Head.

        {{simulated_data p=7 model=toy other=make_sim}}
        """

    assert "``x1..x7, y``" in f.__doc__ and "make_sim, simulate, toy_mean, toy_sd" in f.__doc__

    def g():
        """{{simulated_data p=7}}"""  # no other= nor model=

    with pytest.raises(KeyError, match="needs the field .other."):
        fill(g)
