"""``attnviz render``: draw the attention weights of a preset or a file into a PNG or SVG, or
write them as .npy or .csv.

    attnviz render --preset masked-softmax-1d --out weights.png
    attnviz render --load work.attnviz --out weights.svg --mask-mode strict
    attnviz render --load bert.attnviz-capture --layer 1 --head 5 --out head5.png
    attnviz render --load bert.attnviz-capture --layer 1 --heads all --batch 1 --color-range auto --out layer1.png
    attnviz render --load bert.attnviz-capture --layer 1 --heads all --out layer1.npy
    attnviz render --preset pitfall-zero-length --size 1280x720 --out slide.png
    attnviz render --preset dot-toy --dpi 300 --out print.png
    attnviz render --list-presets

A model's file (heads, layers, masks, tokens: see ``attnviz/io/FILE_FORMATS.md``) shows head 0
of layer 0 unless ``--layer``/``--head`` say otherwise (a note says so); ``--heads all`` draws
every head of the layer as a grid of small maps under one colour scale, for one batch element
(``--batch``, default 0). The tokens the file brings label the axes. ``--out`` ending in .npy
or .csv writes the weights of that selection instead of a picture: (B, L_q, L_k) for one head,
(L_q, L_k) with ``--batch``, (H, L_q, L_k) with ``--heads all``.

Every setting has an option (``attnviz.state.settings`` declares them: ``--scoring``, ``--mask-mode``,
``--window``, ``--dropout`` with ``--train``...), checked by its declaration before any file is
read; ``--causal`` and ``--score-multiplier`` (formerly ``--scale``) change the call drawn (each call has
its own). ``--color-range``, ``--vmin``/``--vmax`` set the colour scale, ``--dpi`` a PNG's resolution;
in training mode with dropout the weights drawn are those after dropout.

No window is shown: the computation runs synchronously (``compute.run_state``), the heatmaps are
laid out off screen and grabbed. Without a display (Linux, no ``DISPLAY``/``WAYLAND_DISPLAY``) Qt
is switched to its ``offscreen`` platform. Every failure, from a typo in an option to an engine
error, ends with exit status 1 (2 for usage errors) and ONE line on stderr, never a traceback.
Scores that overflowed (finite inputs whose weights came out NaN) are said in one
"attnviz render: warning: ..." line on stderr; the exit status stays 0, what was computed is
what was written.
Qt widgets and torch are imported only once the inputs have been read and checked.

What it prints is in the system's language (``LANGUAGE``, ``LC_ALL``, ``LANG``: Portuguese for
any Portuguese, else English), not the app's saved choice: a script that sets ``LANG=C`` gets
English. argparse's own words (``--help``, its error texts) stay English, and so does the image.
"""

from __future__ import annotations

import argparse
import math
import re
import sys
import warnings
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from attnviz.cli.command_inputs import LINE, add_input_options, add_setting_options, command_state, input_paths
from attnviz.output.terminal import (
    EXIT_USAGE,
    CommandError,
    OneLineParser,
    Voice,
    application,
    quiet_qt,
    run_command,
    say,
)
from attnviz.state.document import State
from attnviz.state.run import Focus
from attnviz.text.tr import QT_TRANSLATE_NOOP, Message, exception_message
from attnviz.text.tr import message as fill

if TYPE_CHECKING:  # Qt widgets and torch load only when an image is actually drawn
    import numpy as np

    from attnviz.compute import ViewData
    from attnviz.ui.files.export import WeightsFigure

__all__ = ["RenderError", "build_parser", "figure_for", "grid_for", "main", "render_main", "selected_weights"]

PROG = "attnviz render"
#: Exit statuses: a file, engine or write problem; a bad command line.
EXIT_FAILED = 1
MAX_SIDE = 16384  # pixels; a bigger image is a typo, not a figure


class RenderError(CommandError):
    """A reason to stop, already phrased for the user (one line, translatable)."""


#: The command lines that end ``--help``.
EXAMPLES = (
    "attnviz render --preset masked-softmax-1d --out weights.png",
    "attnviz render --preset pitfall-zero-length --out pitfall.svg",
    "attnviz render --load work.attnviz --out weights.svg --mask-mode strict",
    "attnviz render --load bert.attnviz-capture --layer 1 --head 5 --out head5.png",
    "attnviz render --load bert.attnviz-capture --layer 1 --heads all --color-range auto --out layer1.png",
    "attnviz render --preset dot-toy --size 1280x720 --dpi 300 --out print.png",
    "attnviz render --preset dot-toy --save-session work.attnviz",
    "attnviz render --list-presets",
)


def build_parser() -> OneLineParser:
    parser = OneLineParser(
        prog=PROG,
        examples=EXAMPLES,
        description="Draw the attention weights of a preset, a session (.attnviz) or a tensor file "
        "(.npy, .npz, .pt, .safetensors) into a PNG or SVG image, without opening a window.",
    )
    add_input_options(
        parser,
        list_presets=True,
        ranks=True,
        role_help="which array of a tensor file plays a role: queries, keys, values, valid_lens, "
        "attn_mask, key_padding_mask, attention_mask, mask, is_causal, causal, scale, tokens, "
        "query_tokens, key_tokens (repeatable; ROLE= leaves the role out)",
    )
    parser.add_argument(
        "--out", metavar="FILE", help="image to write (.png or .svg), or the weights drawn (.npy or .csv)"
    )
    parser.add_argument(
        "--save-session",
        metavar="FILE",
        help="also (or only) write the input with the settings given as an .attnviz session, for --load "
        "and File > Open",
    )
    # Checked after parsing: the list lives with the colour maps, which import pyqtgraph.
    parser.add_argument(
        "--colormap", metavar="NAME", help="colour map: cividis (default), viridis, magma, inferno, plasma or gray"
    )
    parser.add_argument("--batch", type=int, metavar="N", help="draw only batch element N (0-based)")
    parser.add_argument(
        "--size", metavar="WxH", help="figure size in pixels at 96 dpi, e.g. 800x600 (1280x720 for a slide)"
    )
    parser.add_argument(
        "--dpi",
        type=int,
        metavar="N",
        help="a PNG's resolution for print, e.g. 300: the same figure with N/96 as many pixels a side",
    )
    parser.add_argument(
        "--color-range",
        choices=COLOR_RANGES,
        help="the colour scale: fixed (default: 0 to 1, the weights' range; 0 to 1/(1-p) with --train), "
        "auto (each map its own smallest to largest weight), shared (one range over every map drawn)",
    )
    parser.add_argument("--vmin", type=float, metavar="X", help="the colour scale's low end (any --color-range)")
    parser.add_argument("--vmax", type=float, metavar="X", help="the colour scale's high end (any --color-range)")
    heads = parser.add_mutually_exclusive_group()
    heads.add_argument("--head", type=int, metavar="N", help="head of a model's tensors to draw (default 0)")
    heads.add_argument("--heads", choices=("all",), help="all: every head of the layer, as a grid")
    add_setting_options(parser)
    return parser


def render_main(argv: Sequence[str] | None = None) -> int:
    """Run ``attnviz render`` with ``argv`` (without the word "render"); returns the exit status."""
    return run_command(build_parser(), _render, argv, failed=EXIT_FAILED)


#: The console script ``attnviz-render`` (its arguments are the process's).
main = render_main


def _render(args: argparse.Namespace, voice: Voice) -> int:
    from attnviz.teaching.lessons import ALL_PRESETS

    if args.list_presets:
        for preset in ALL_PRESETS.values():
            print(f"{preset.name:22} {voice.text(preset.title)}")
        return 0
    if args.save_session:
        _check_out(Path(args.save_session), input_paths(args))
    if not args.out:
        if args.save_session:
            return _save_session_only(args, voice)
        raise RenderError(
            fill(QT_TRANSLATE_NOOP("Render", "--out FILE is required (see {prog} --help)"), prog=PROG), EXIT_USAGE
        )
    out = Path(args.out)
    if out.suffix.lower() not in (*IMAGE_SUFFIXES, *ARRAY_SUFFIXES):
        raise RenderError(
            fill(
                QT_TRANSLATE_NOOP(
                    "Render", "--out {out}: must end in .png or .svg (a picture), or .npy or .csv (the weights)"
                ),
                out=args.out,
            ),
            EXIT_USAGE,
        )
    _check_out(out, input_paths(args))
    size = _parse_size(args.size) if args.size else None
    _check_range_options(args)
    colormap = _check_colormap(args.colormap) if args.colormap else None
    notes: list[str] = []
    # The grid shows every head: no head is chosen (nor said to be).
    state, focus, source = command_state(args, notes, file_head=0 if args.heads else args.head)
    if args.save_session:
        _write_session(Path(args.save_session), state, focus)
        notes.append(fill(QT_TRANSLATE_NOOP("Render", "the session is in {path}"), path=args.save_session))
    heads, focuses = _selection(state, focus, args)

    from attnviz.compute import run_state

    views: list[ViewData] = []
    for head_focus_ in focuses:
        with warnings.catch_warnings():
            # A model's arrays are read-only (states share them) and the engine writes no input:
            # torch's warning about that would break the promise of a silent stderr.
            warnings.filterwarnings("ignore", message="The given NumPy array is not writable")
            # numpy's overflow warnings are blocks of lines; the diagnostics say it in one.
            warnings.filterwarnings("ignore", category=RuntimeWarning)
            outcome = run_state(state, 0, head_focus_)
        if outcome.error is not None or outcome.view is None:
            raise RenderError(
                fill(LINE, name=source, problem=outcome.error or QT_TRANSLATE_NOOP("Render", "no result"))
            )
        views.append(_drawn_weights(outcome.view, state))
    n_batch = int(views[0].weights.shape[0])
    if args.batch is not None and not 0 <= args.batch < n_batch:
        raise RenderError(
            fill(
                QT_TRANSLATE_NOOP(
                    "Render", "--batch {batch} is out of range: the input has {n} batch element(s), 0-{last}"
                ),
                batch=args.batch,
                n=n_batch,
                last=n_batch - 1,
            ),
            EXIT_USAGE,
        )
    grid_batch = 0 if args.batch is None else args.batch
    if heads is not None and args.batch is None and n_batch > 1:
        notes.append(
            fill(QT_TRANSLATE_NOOP("Render", "batch element 0 of {n} is shown (choose one with --batch)"), n=n_batch)
        )
    # Worded before writing: once the file is written, only printing is left.
    lines = [voice.text(fill(QT_TRANSLATE_NOOP("Render", "note: {note}"), note=note)) for note in notes]
    lines.append(voice.text(fill(QT_TRANSLATE_NOOP("Render", "wrote {path}"), path=str(out))))
    overflow = _overflow_warning(views)
    warning = None
    if overflow is not None:
        warning = voice.text(fill(QT_TRANSLATE_NOOP("Render", "warning: {warning}"), warning=overflow))
    if out.suffix.lower() in ARRAY_SUFFIXES:
        _write_weights(out, selected_weights(views, heads, args.batch), grid=heads is not None)
    elif heads is not None:
        levels = color_levels(
            [view.weights[grid_batch] for view in views], [view.mask[grid_batch] for view in views], state, args
        )
        _draw(
            lambda: grid_for(
                views, heads, grid_batch, state, source=source, focus=focus, colormap=colormap, size=size, levels=levels
            ),
            out,
            args.dpi,
        )
    else:
        batches = None if args.batch is None else [args.batch]
        shown = list(range(n_batch)) if batches is None else batches
        view = views[0]
        levels = color_levels([view.weights[b] for b in shown], [view.mask[b] for b in shown], state, args)
        _draw(
            lambda: figure_for(
                view, state, source=source, focus=focus, batches=batches, colormap=colormap, size=size, levels=levels
            ),
            out,
            args.dpi,
        )
    for line in lines:
        say(line, sys.stdout)
    if warning is not None:
        say(f"{PROG}: {warning}", sys.stderr)
    return 0


def _save_session_only(args: argparse.Namespace, voice: Voice) -> int:
    """``--save-session`` without ``--out``: the session is written, nothing is computed."""
    notes: list[str] = []
    state, focus, _source = command_state(args, notes, file_head=args.head)
    path = Path(args.save_session)
    _write_session(path, state, focus)
    for note in notes:
        say(voice.text(fill(QT_TRANSLATE_NOOP("Render", "note: {note}"), note=note)), sys.stdout)
    say(voice.text(fill(QT_TRANSLATE_NOOP("Render", "wrote {path}"), path=str(path))), sys.stdout)
    return 0


def _write_session(path: Path, state: State, focus: Focus) -> None:
    from attnviz.io import AttnvizFileError
    from attnviz.io.session_state import save_state_file

    try:
        save_state_file(path, state, focus)
    except AttnvizFileError as exc:
        raise RenderError(exception_message(exc)) from exc


def _overflow_warning(views: Sequence[ViewData]) -> str | None:
    """The engine's line about scores that overflowed (the weights drawn are NaN there), once."""
    from attnviz.engine.diagnose import OVERFLOW_TEMPLATES

    for view in views:
        for line in view.warnings:
            if isinstance(line, Message) and line.source in OVERFLOW_TEMPLATES:
                return line
    return None


# ``--color-range``: one range for every map from 0 to the largest a weight can be, each
# map's own, one over all maps drawn.
COLOR_RANGES = ("fixed", "auto", "shared")
MAX_DPI = 1200


def _check_range_options(args: argparse.Namespace) -> None:
    if args.dpi is not None and not 1 <= args.dpi <= MAX_DPI:
        raise RenderError(
            fill(
                QT_TRANSLATE_NOOP("Render", "--dpi {dpi}: expected a whole number from 1 to {most}"),
                dpi=args.dpi,
                most=MAX_DPI,
            ),
            EXIT_USAGE,
        )
    for name in ("vmin", "vmax"):
        value = getattr(args, name)
        if value is not None and not math.isfinite(value):
            raise RenderError(
                fill(QT_TRANSLATE_NOOP("Render", "--{name} {value}: expected a finite number"), name=name, value=value),
                EXIT_USAGE,
            )
    if args.vmin is not None and args.vmax is not None and not args.vmin < args.vmax:
        raise RenderError(
            fill(
                QT_TRANSLATE_NOOP("Render", "--vmin {low} must be below --vmax {high}"), low=args.vmin, high=args.vmax
            ),
            EXIT_USAGE,
        )


def _drawn_weights(view: ViewData, state: State) -> ViewData:
    """The weights a figure shows: after dropout when it applies (training mode, p > 0), as the
    values are pooled with; otherwise the softmax's."""
    from dataclasses import replace

    from attnviz.state.settings import dropout_applies

    if not dropout_applies(state.settings):
        return view
    return replace(view, weights=view.applied_weights)


def color_levels(
    maps: Sequence[np.ndarray], masks: Sequence[np.ndarray], state: State, args: argparse.Namespace
) -> list[tuple[float, float]]:
    """The colour range of each map (``maps[i]`` with ``masks[i]``, True = masked) for
    ``--color-range`` and ``--vmin``/``--vmax``. ``auto`` and ``shared`` span the finite weights
    of the cells not masked (all cells where every one is masked)."""
    import numpy as np

    from attnviz.state.settings import dropout_applies

    def span(arrays: Sequence[np.ndarray]) -> tuple[float, float] | None:
        values = [a[np.isfinite(a)] for a in arrays]
        values = [v for v in values if v.size]
        if not values:
            return None
        low, high = min(float(v.min()) for v in values), max(float(v.max()) for v in values)
        if high > low:
            return low, high
        return (0.0, high) if high > 0 else (low - 1.0, low + 1.0)  # one value: from 0 to it

    def kept(weights: np.ndarray, mask: np.ndarray) -> np.ndarray:
        inside = weights[~mask] if mask.shape == weights.shape else weights
        return inside if inside.size else weights

    mode = args.color_range or "fixed"
    top = 1.0
    if dropout_applies(state.settings):
        top = 1.0 / (1.0 - state.settings.dropout)  # a kept weight is scaled by 1/(1-p)
    fixed = (0.0, top)
    if mode == "shared":
        shared = span([kept(w, m) for w, m in zip(maps, masks, strict=True)]) or fixed
        levels = [shared] * len(maps)
    elif mode == "auto":
        levels = [span([kept(w, m)]) or fixed for w, m in zip(maps, masks, strict=True)]
    else:
        levels = [fixed] * len(maps)
    out = []
    for low, high in levels:
        low = low if args.vmin is None else args.vmin
        high = high if args.vmax is None else args.vmax
        if not low < high:
            high = low + abs(low) * 1e-3 + 1e-6  # --vmin above the data's top: a range all the same
        out.append((low, high))
    return out


IMAGE_SUFFIXES = (".png", ".svg")
ARRAY_SUFFIXES = (".npy", ".csv")


def _selection(state: State, focus: Focus, args: argparse.Namespace) -> tuple[list[int] | None, list[Focus]]:
    """The heads to draw (None: the one on show) and the head of each."""
    if args.heads is None:
        return None, [focus]
    # Every head of the call, under the same settings: the options given apply to all of them.
    heads = list(range(state.run.heads(focus.layer)))
    return heads, [Focus(focus.layer, h) for h in heads]


def selected_weights(views: Sequence[ViewData], heads: Sequence[int] | None, batch: int | None) -> np.ndarray:
    """The weights drawn: (H, L_q, L_k) of one batch element (default 0) for a grid of heads,
    else (B, L_q, L_k), or (L_q, L_k) of batch element ``batch``."""
    import numpy as np

    if heads is not None:
        return np.stack([view.weights[batch or 0] for view in views])
    weights = views[0].weights
    return weights if batch is None else weights[batch]


def _write_weights(out: Path, weights: np.ndarray, *, grid: bool) -> None:
    from attnviz.io import AttnvizFileError, save_arrays, save_csv

    try:
        if out.suffix.lower() == ".csv":
            save_csv(out, weights, block="head" if grid else "batch")
        else:
            save_arrays(out, {"weights": weights})
    except AttnvizFileError as exc:
        raise RenderError(exception_message(exc)) from exc


def _check_out(out: Path, inputs: list[str]) -> None:
    # Checked before any work, so a typo in the folder does not cost a computation.
    parent = out.parent if str(out.parent) else Path(".")
    if not parent.is_dir():
        raise RenderError(
            fill(
                LINE,
                name=str(out),
                problem=fill(
                    QT_TRANSLATE_NOOP("Render", "cannot be written (the folder {folder} does not exist)"),
                    folder=str(parent),
                ),
            )
        )
    if out.is_dir():
        raise RenderError(
            fill(LINE, name=str(out), problem=QT_TRANSLATE_NOOP("Render", "is a folder, not an image file"))
        )
    from attnviz.io.paths import OutputRefused, check_output

    try:
        # An input overwritten by its own figure is lost; a FIFO would block the write for ever.
        check_output(out, inputs)
    except OutputRefused as exc:
        raise RenderError(fill(LINE, name=str(out), problem=exc.strerror)) from exc


def _parse_size(text: str) -> tuple[int, int]:
    match = re.fullmatch(r"\s*(\d{1,6})\s*[xX×]\s*(\d{1,6})\s*", text)
    if not match:
        raise RenderError(
            fill(
                QT_TRANSLATE_NOOP("Render", "--size {text}: expected WIDTHxHEIGHT in pixels, e.g. 800x600"),
                text=repr(text),
            ),
            EXIT_USAGE,
        )
    width, height = int(match.group(1)), int(match.group(2))
    if not (1 <= width <= MAX_SIDE and 1 <= height <= MAX_SIDE):
        raise RenderError(
            fill(
                QT_TRANSLATE_NOOP("Render", "--size {text}: each side must be from 1 to {most} pixels"),
                text=text,
                most=MAX_SIDE,
            ),
            EXIT_USAGE,
        )
    return width, height


def _check_colormap(name: str) -> str:
    from attnviz.ui.heatmap.colormaps import canonical_colormap_name

    try:
        return canonical_colormap_name(name)
    except ValueError as exc:
        raise RenderError(fill(LINE, name="--colormap", problem=exception_message(exc)), EXIT_USAGE) from exc


def figure_for(
    view: ViewData,
    state: State,
    *,
    source: str,
    focus: Focus = Focus(),
    batches: list[int] | None = None,
    colormap: str | None = None,
    size: tuple[int, int] | None = None,
    levels: Sequence[tuple[float, float]] | None = None,
) -> WeightsFigure:
    """The figure ``attnviz render`` saves, laid out off screen (a QApplication must exist).
    ``levels``: each map's colour range (default 0 to 1; see :func:`color_levels`).

    Public so a script or test can find where each cell is (``figure.cell_point``): the same
    arguments always give the same layout. Raises ``ValueError`` for a size that is too small.
    """
    from attnviz.output.figures import label_maps
    from attnviz.ui.files.export import build_weights_figure, figure_subtitle

    figure = build_weights_figure(
        view,
        batches=batches,
        title=_title(source, state, focus),
        subtitle=figure_subtitle(state, focus),
        colormap=colormap,
        size=size,
        levels=levels,
    )
    label_maps(figure, view, state.head_view(focus))
    return figure


def _title(source: str, state: State, focus: Focus) -> str:
    """The picture's title: the file, and the layer and head drawn when there is a choice."""
    if state.run.single_head:
        return f"{source}: attention weights"
    return f"{source}: attention weights, layer {focus.layer}, head {focus.head}"


def grid_for(
    views: Sequence[ViewData],
    heads: Sequence[int],
    batch: int,
    state: State,
    *,
    source: str,
    focus: Focus = Focus(),
    colormap: str | None = None,
    size: tuple[int, int] | None = None,
    levels: Sequence[tuple[float, float]] | None = None,
) -> WeightsFigure:
    """The figure ``attnviz render --heads all`` saves (``figure.maps[i]`` is head ``heads[i]``
    of call ``focus.layer``), laid out off screen (a QApplication must exist). Raises
    ``ValueError`` for a size too small."""
    from attnviz.output.figures import build_heads_grid
    from attnviz.ui.files.export import figure_subtitle

    layer = "" if state.run.single_head else f", layer {focus.layer}"
    title = f"{source}: attention weights{layer}, batch {batch}, every head"
    return build_heads_grid(
        views,
        heads,
        batch,
        state.head_view(focus),
        title=title,
        subtitle=figure_subtitle(state, focus),
        colormap=colormap,
        size=size,
        levels=levels,
    )


def _draw(make: Callable[[], WeightsFigure], out: Path, dpi: int | None = None) -> None:
    """Lay out the figure ``make`` builds (a size too small for it is a usage error) and save it."""
    from attnviz.ui.files.export import ExportError

    with quiet_qt(PROG):
        _app = application()
        try:
            figure = make()
        except ValueError as exc:
            raise RenderError(fill(LINE, name="--size", problem=exception_message(exc)), EXIT_USAGE) from exc
        try:
            figure.save(out, dpi)
        except ExportError as exc:
            raise RenderError(exception_message(exc)) from exc
        finally:
            figure.close()


if __name__ == "__main__":
    sys.exit(main())
