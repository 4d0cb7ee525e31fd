"""``attnviz.intervene``: the public name of ``attnviz.compare.intervene`` (interventions live with
the other difference tools in ``attnviz.compare``). Importing this module gives that one itself,
so ``attnviz.intervene(model, inputs, edits)`` and ``from attnviz.intervene import MaskEdit`` keep
working."""

import sys

from attnviz.compare import intervene as _intervene
from attnviz.compare.intervene import *  # noqa: F403 - the same names, for type checkers

sys.modules[__name__] = _intervene
