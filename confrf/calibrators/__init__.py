"""Calibrators: turn calibration scores into per-row thresholds."""

from .base import Calibrator, Guarantee, Thresholds
from .lcp import LCPThreshold, lcp_threshold
from .lcp_rf import LCPForestCalibrator
from .registry import METHODS, MethodSpec, get_method, method_options, register
from .split import SplitCalibrator

__all__ = [
    "Calibrator",
    "Guarantee",
    "Thresholds",
    "LCPThreshold",
    "lcp_threshold",
    "LCPForestCalibrator",
    "SplitCalibrator",
    "METHODS",
    "MethodSpec",
    "get_method",
    "method_options",
    "register",
]
