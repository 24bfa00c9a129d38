"""The demo behind main.py (not part of the library). Set before PyTorch and tqdm load, unless already set: OpenMP
threads wait passively (spinning ones made generation 10-20x slower on a busy 2-core machine, measured), and no
progress bars (transformers draws one while de-quantizing the weights, which its own switch does not reach).
"""

import os

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
os.environ.setdefault("TQDM_DISABLE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
