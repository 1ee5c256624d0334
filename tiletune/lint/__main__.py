"""``python -m tiletune.lint lint PATH...`` / ``python -m tiletune.lint lsp``."""

import sys

from .cli import main

if __name__ == "__main__":
    sys.exit(main())
