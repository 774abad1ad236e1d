"""Fitted results and their reports."""

from .._tables import Summary
from .compare import Comparison
from .evaluation import Evaluation
from .result import ConformalResult

__all__ = ["ConformalResult", "Summary", "Evaluation", "Comparison"]
