"""Snapshot in, result out: every computation the app runs off the GUI thread. No Qt here.

``attention`` is the main view's computation; ``heads`` every head of a call and per-head
statistics; ``labs`` the masking and scaling labs'; ``compare`` the side-by-side view's;
``long_view`` the long-context view's; ``jobs`` what a view's registered computation is given
and what the main compute thread runs. Each turns every failure into data (an error message and
the field it concerns) so the window shows it where the user is looking.
"""

from attnviz.compute.attention import Outcome, ViewData, run_snapshot, run_state

__all__ = ["Outcome", "ViewData", "run_snapshot", "run_state"]
