"""File input and output for attnviz: tensor files, session files, capture files, autosave.

No Qt here: everything works headless and from scripts. torch is imported only when a
PyTorch file is actually read or written.
"""

from attnviz.io._limits import DEFAULT_MAX_BYTES, DEFAULT_MAX_ELEMENTS
from attnviz.io.autosave import AutosaveSlot, claim_autosave, stale_autosaves
from attnviz.io.capture_file import is_capture_file, load_capture, save_capture
from attnviz.io.errors import AttnvizFileError, CaptureFileError, SessionFileError, TensorFileError
from attnviz.io.roles import (
    ALL_ROLES,
    MASK_ROLES,
    MODEL_ROLES,
    ROLES,
    TEXT_ROLES,
    describe,
    guess_roles,
    needs_head_choice,
    role_names,
    select_head,
)
from attnviz.io.session import Session, load_session, save_session
from attnviz.io.tensors import TensorFile, load_tensor_file, save_arrays, save_csv

__all__ = [
    "ALL_ROLES",
    "DEFAULT_MAX_BYTES",
    "DEFAULT_MAX_ELEMENTS",
    "MASK_ROLES",
    "MODEL_ROLES",
    "ROLES",
    "TEXT_ROLES",
    "AttnvizFileError",
    "AutosaveSlot",
    "CaptureFileError",
    "Session",
    "SessionFileError",
    "TensorFile",
    "TensorFileError",
    "claim_autosave",
    "describe",
    "guess_roles",
    "is_capture_file",
    "load_capture",
    "load_session",
    "load_tensor_file",
    "needs_head_choice",
    "role_names",
    "save_arrays",
    "save_capture",
    "save_csv",
    "save_session",
    "select_head",
    "stale_autosaves",
]
