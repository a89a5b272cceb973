"""``python -m qdecode.compile_cache [--where | --clear]``: see :mod:`qdecode.compile_cache`."""

import sys

from qdecode.compile_cache import main

sys.exit(main())
