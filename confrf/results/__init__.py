"""Fitted results and their reports."""

from .result import ConformalResult
from .summary import Summary

__all__ = ["ConformalResult", "Summary"]
