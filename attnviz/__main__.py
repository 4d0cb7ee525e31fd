import sys

from attnviz.cli.gui import main

sys.exit(main())
