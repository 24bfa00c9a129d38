"""``python -m benchmarks.data.devset``: the second development set's size and the start of one conversation."""

import sys

from benchmarks.data.devset import main

sys.exit(main())
