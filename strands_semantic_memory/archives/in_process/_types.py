"""Array types shared by the in-process vector index and its archive."""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

Ids = npt.NDArray[np.int64]
"""Vector ids (see ``vector_id``)."""
