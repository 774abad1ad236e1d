"""Numerical tolerances shared by the calibrators and the localizers.

The calibrators import the localizers, never the other way round; a constant
both use lives here, below both, so that no localizer imports a calibrator.
"""

#: weight sums closer than this are treated as equal: LCP's (which can only widen a set, docs/theory.md) and the
#: region rule's cluster masses (a tie sends the point to the undecidable region)
TIE_TOL = 1e-10
