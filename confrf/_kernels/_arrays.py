"""Short names of the array types in the kernels' stubs (the .pyi files), by dtype.

The stubs only: nothing imports this module at run time.
"""

from typing import TypeAlias

import numpy as np
from numpy.typing import NDArray

F64: TypeAlias = NDArray[np.float64]
I64: TypeAlias = NDArray[np.int64]
I32: TypeAlias = NDArray[np.int32]
