"""Entry script for the PyInstaller bundle.

PyInstaller needs a script, not a module: ``attnviz/__main__.py`` uses a relative import and so
cannot be the entry itself.  This does what the ``attnviz`` console script does.
"""

import sys

from attnviz.cli.gui import main

if __name__ == "__main__":
    sys.exit(main())
