"""``python -m skcoreset``: the ``skcoreset`` command (see ``python -m skcoreset --help``)."""

import sys

from .cli import main

if __name__ == "__main__":
    sys.exit(main())
