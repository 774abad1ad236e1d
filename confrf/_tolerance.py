"""Numerical tolerances shared by the calibrators and the localizers (below both: neither imports the other)."""

#: LCP weight sums closer than this are treated as equal; this can only widen a set (docs/theory.md).
TIE_TOL = 1e-10
