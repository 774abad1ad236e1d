"""Fitted results and their reports."""

from .compare import Comparison
from .evaluation import Evaluation
from .result import ConformalResult
from .summary import Summary

__all__ = ["ConformalResult", "Summary", "Evaluation", "Comparison"]
