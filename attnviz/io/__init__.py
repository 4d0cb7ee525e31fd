"""File input and output for attnviz: tensor files, session files, autosave.

No Qt here: everything works headless and from scripts. torch is imported only when a
PyTorch file is actually read or written.
"""

from attnviz.io._limits import DEFAULT_MAX_BYTES, DEFAULT_MAX_ELEMENTS
from attnviz.io.errors import AttnvizFileError, SessionFileError, TensorFileError
from attnviz.io.roles import ROLES, describe, guess_roles, needs_head_choice, select_head
from attnviz.io.autosave import AutosaveSlot, claim_autosave, stale_autosaves
from attnviz.io.session import Session, load_session, save_session
from attnviz.io.tensors import TensorFile, load_tensor_file, save_arrays, save_csv

__all__ = [
    "DEFAULT_MAX_BYTES",
    "DEFAULT_MAX_ELEMENTS",
    "ROLES",
    "AttnvizFileError",
    "AutosaveSlot",
    "Session",
    "SessionFileError",
    "TensorFile",
    "TensorFileError",
    "claim_autosave",
    "describe",
    "guess_roles",
    "load_session",
    "load_tensor_file",
    "needs_head_choice",
    "save_arrays",
    "save_csv",
    "save_session",
    "select_head",
    "stale_autosaves",
]
