"""The demo behind main.py: an agent with semantic memory, a local chat model, and checks of what it answers.

Not part of the library.

OpenMP threads that spin while they wait made the local model's generation 10-20x slower on a busy 2-core machine
(llama.cpp and PyTorch alike, measured); passive waiting removes that. OpenMP reads ``OMP_WAIT_POLICY`` once, when it
loads (with PyTorch or llama-cpp-python), so it is set here, before either is imported, unless already set.
"""

import os

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
