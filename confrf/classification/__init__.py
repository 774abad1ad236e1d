"""Classification: conformal prediction sets (split, LCP-RF, class-conditional, PAC)."""

from .estimator import ConformalClassifier
from .result import ClassificationResult
from .scores import APSScore, ClassScore, LACScore, RAPSScore, get_class_score

__all__ = [
    "ConformalClassifier",
    "ClassificationResult",
    "ClassScore",
    "LACScore",
    "APSScore",
    "RAPSScore",
    "get_class_score",
]
