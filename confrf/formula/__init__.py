"""R-style formulas (``"price ~ carat + C(cut)"``) turned into design matrices.

A thin wrapper over formulaic: the formula is parsed once at fit, and the
fitted right-hand-side ``ModelSpec`` (levels, stateful-transform state such
as the mean used by ``center(x)``) is re-applied to new data.  On top of
formulaic this package adds the checks formulaic leaves out: no row is ever
dropped silently, NaN/inf raise, and unseen categorical levels raise
instead of being coded as zeros.

Modules: :mod:`.frame` (coercion and NaN/inf checks of input frames),
:mod:`.parse` (parsing, column resolution, running formulaic),
:mod:`.response` (the left-hand side), :mod:`.design` (the fitted
:class:`Design`), :mod:`.messages` (message helpers).
"""

from .design import Design
from .frame import as_frame

__all__ = ["Design", "as_frame"]
