"""Calibrators: turn calibration scores into per-row thresholds."""

from .base import Calibrator, Guarantee, Thresholds
from .cross import CrossCalibrator
from .cv_plus import CVPlusCalibrator
from .groupwise import GroupwiseCalibrator
from .groupwise_pac import PACLCPForestGroupCalibrator, PACSplitGroupCalibrator
from .jackknife_ab import JackknifeABCalibrator
from .lcp import LCPThreshold, lcp_threshold
from .lcp_kernel import KernelLCPCalibrator
from .lcp_rf import LCPForestCalibrator
from .lcp_rf_g import LCPForestGroupCalibrator
from .pac import PACForestCalibrator, PACReport
from .pac_bounds import pac_delta, pac_epsilon, pac_n2
from .registry import METHODS, MethodSpec, get_method, method_options, register
from .slcp import SLCPCalibrator
from .split import SplitCalibrator
from .split_g import SplitGroupCalibrator

__all__ = [
    "Calibrator",
    "Guarantee",
    "Thresholds",
    "LCPThreshold",
    "lcp_threshold",
    "LCPForestCalibrator",
    "KernelLCPCalibrator",
    "SLCPCalibrator",
    "PACForestCalibrator",
    "PACReport",
    "pac_epsilon",
    "pac_delta",
    "pac_n2",
    "SplitCalibrator",
    "CrossCalibrator",
    "CVPlusCalibrator",
    "JackknifeABCalibrator",
    "GroupwiseCalibrator",
    "SplitGroupCalibrator",
    "LCPForestGroupCalibrator",
    "PACSplitGroupCalibrator",
    "PACLCPForestGroupCalibrator",
    "METHODS",
    "MethodSpec",
    "get_method",
    "method_options",
    "register",
]
