"""``attnviz render``: draw the attention weights of a preset or a file into a PNG or SVG, or
write them as .npy or .csv.

    attnviz render --preset masked-softmax-1d --out weights.png
    attnviz render --load work.attnviz --out weights.svg --mask-mode strict
    attnviz render --load bert.npz --layer 3 --head 5 --out head5.png
    attnviz render --load bert.npz --layer 3 --heads all --batch 1 --out layer3.png
    attnviz render --load bert.npz --layer 3 --heads all --out layer3.npy
    attnviz render --list-presets

A model's file (heads, layers, masks, tokens: see ``attnviz/io/FILE_FORMATS.md``) shows head 0
of layer 0 unless ``--layer``/``--head`` say otherwise (a note says so); ``--heads all`` draws
every head of the layer as a grid of small maps under one colour scale, for one batch element
(``--batch``, default 0). The tokens the file brings label the axes. ``--out`` ending in .npy
or .csv writes the weights of that selection instead of a picture: (B, L_q, L_k) for one head,
(L_q, L_k) with ``--batch``, (H, L_q, L_k) with ``--heads all``.

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
import contextlib
import os
import re
import sys
import warnings
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn, TextIO

from .document import SetSettings, State
from .io.state_io import (
    CAUSAL_NAMES,
    DTYPE_NAMES,
    LENS_MODES,
    MASK_MODE_NAMES,
    SCORING_NAMES,
    is_session_path,
)
from .model_run import Focus
from .tr import QT_TRANSLATE_NOOP, Message, Source, exception_message, one_line, plural
from .tr import message as fill

if TYPE_CHECKING:  # Qt widgets and torch load only when an image is actually drawn
    import numpy as np
    from PySide6.QtCore import QCoreApplication

    from .compute import ViewData
    from .ui.files.export import WeightsFigure

__all__ = ["RenderError", "build_parser", "figure_for", "grid_for", "main", "render_main", "selected_weights"]

PROG = "attnviz render"
#: Exit statuses: a file, engine or write problem; a bad command line.
EXIT_FAILED = 1
EXIT_USAGE = 2
MAX_SIDE = 16384  # pixels; a bigger image is a typo, not a figure


# "<what>: <what is wrong>" lines: the shape is the same in every language shipped, so the
# template is left unmarked (empty context) and only the values are translated.
_LINE = Source("", "{name}: {problem}")


class RenderError(Exception):
    """A reason to stop, already phrased for the user (one line; a ``Message`` stays one, so it
    is printed in the system's language)."""

    def __init__(self, message: str, status: int = EXIT_FAILED) -> None:
        super().__init__(one_line(message))
        self.status = status


class _Parser(argparse.ArgumentParser):
    """argparse prints the usage and the error on several lines; we promise one line."""

    def error(self, message: str) -> NoReturn:
        raise RenderError(
            fill(QT_TRANSLATE_NOOP("Render", "{error} (see {prog} --help)"), error=message, prog=PROG), EXIT_USAGE
        )


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog=PROG,
        description="Draw the attention weights of a preset, a session (.attnviz) or a tensor file "
        "(.npy, .npz, .pt, .safetensors) into a PNG or SVG image, without opening a window.",
    )
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument("--preset", metavar="NAME", help="one of the presets (see --list-presets)")
    source.add_argument(
        "--load",
        metavar="FILE",
        action="append",
        help="a session (.attnviz), capture or tensor file (repeat it for the ranks' captures of one distributed run)",
    )
    source.add_argument("--list-presets", action="store_true", help="list the presets and exit")
    parser.add_argument(
        "--out", metavar="FILE", help="image to write (.png or .svg), or the weights drawn (.npy or .csv)"
    )
    parser.add_argument("--scoring", choices=SCORING_NAMES, help="scoring function")
    parser.add_argument("--mask-mode", choices=MASK_MODE_NAMES, help="how masked keys are applied")
    parser.add_argument("--lens-mode", choices=LENS_MODES, help="valid lengths: none, 1d or 2d")
    parser.add_argument("--causal", choices=("off", *CAUSAL_NAMES), help="causal mask alignment")
    parser.add_argument("--dtype", choices=DTYPE_NAMES, help="floating-point type of the computation")
    parser.add_argument("--device", metavar="NAME", help="device to compute on (default: as saved, else cpu)")
    # Checked after parsing: the list lives with the colour maps, which import pyqtgraph.
    parser.add_argument(
        "--colormap", metavar="NAME", help="colour map: cividis (default), viridis, magma, inferno, plasma or gray"
    )
    parser.add_argument("--batch", type=int, metavar="N", help="draw only batch element N (0-based)")
    parser.add_argument("--size", metavar="WxH", help="image size in pixels, e.g. 800x600")
    parser.add_argument("--layer", type=int, metavar="N", help="layer of a model's tensors to draw (default 0)")
    heads = parser.add_mutually_exclusive_group()
    heads.add_argument("--head", type=int, metavar="N", help="head of a model's tensors to draw (default 0)")
    heads.add_argument("--heads", choices=("all",), help="all: every head of the layer, as a grid")
    parser.add_argument(
        "--role",
        action="append",
        default=[],
        metavar="ROLE=NAME",
        help="which array of a tensor file plays a role: queries, keys, values, valid_lens, "
        "attn_mask, key_padding_mask, attention_mask, mask, is_causal, causal, scale, tokens, "
        "query_tokens, key_tokens (repeatable; ROLE= leaves the role out)",
    )
    return parser


def render_main(argv: Sequence[str] | None = None) -> int:
    """Run ``attnviz render`` with ``argv`` (without the word "render"); returns the exit status."""
    voice = _Voice()
    try:
        return _render(list(sys.argv[1:] if argv is None else argv), voice)
    except RenderError as exc:
        _fail_line(voice.text(exception_message(exc)))
        return exc.status
    except KeyboardInterrupt:
        _fail_line(voice.text(QT_TRANSLATE_NOOP("Render", "interrupted")))
        return 130
    except Exception as exc:  # noqa: BLE001 - the promise is one line, never a traceback
        _fail_line(
            voice.text(
                fill(QT_TRANSLATE_NOOP("Render", "unexpected error: {error}"), error=f"{type(exc).__name__}: {exc}")
            )
        )
        return EXIT_FAILED
    finally:
        voice.close()


def main() -> int:
    """Console-script entry point (``attnviz-render``)."""
    return render_main(sys.argv[1:])


def _fail_line(message: str) -> None:
    _say(f"{PROG}: {message}", sys.stderr)


def _say(text: str, stream: TextIO) -> None:
    """Print ``text`` as one line: names from files and the command line are escaped and bounded
    (``one_line``), and what the terminal's encoding cannot show is written as escapes rather
    than failing (after the image has been written, a failure would misreport the run)."""
    line = one_line(text)
    try:
        print(line, file=stream)
    except UnicodeEncodeError:
        encoding = stream.encoding or "ascii"
        print(line.encode(encoding, "backslashreplace").decode(encoding), file=stream)


class _Voice:
    """Text for the terminal in the system's language.

    English needs nothing. Otherwise the first text marked for translation makes the
    QApplication a drawing needs anyway (or uses the one there is: the GUI, tests) and installs
    the system's catalogue; :meth:`close` puts back the language that was installed before, so
    a render run inside the app leaves the app's language alone.
    """

    def __init__(self) -> None:
        self._ready = False
        self._restore: str | None = None

    def text(self, text: str) -> str:
        """``text`` (English, a ``Source`` or a ``Message``) in the system's language."""
        if not isinstance(text, (Source, Message)):
            return str(text)
        try:
            self._install()
            from .ui.i18n import tr_text

            return tr_text(text)
        except Exception:  # noqa: BLE001 - a broken catalogue or Qt must not hide the message itself
            return str(text)

    def _install(self) -> None:
        if self._ready:
            return
        self._ready = True
        from .ui.i18n import current_language, install_language, system_language

        code, before = system_language(), current_language()
        if code != before and install_language(_application(), code):
            self._restore = before

    def close(self) -> None:
        if self._restore is not None:
            from .ui.i18n import install_language

            install_language(None, self._restore)
            self._restore = None


def _render(argv: list[str], voice: _Voice) -> int:
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # --help prints and exits 0
        return int(exc.code or 0)
    from .presets import PRESETS

    if args.list_presets:
        for preset in PRESETS.values():
            print(f"{preset.name:22} {voice.text(preset.title)}")
        return 0
    if not args.out:
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
    _check_out_dir(out)
    size = _parse_size(args.size) if args.size else None
    colormap = _check_colormap(args.colormap) if args.colormap else None

    notes: list[str] = []
    if args.preset is not None:
        if args.preset not in PRESETS:
            raise RenderError(
                fill(
                    QT_TRANSLATE_NOOP("Render", "unknown preset {name}; choose one of {choices}"),
                    name=repr(args.preset),
                    choices=", ".join(PRESETS),
                ),
                EXIT_USAGE,
            )
        state, shown, source = PRESETS[args.preset].build(), Focus(), args.preset
    else:
        state, shown, source = _load(args, notes)
    focus = _focus(state, shown, args, source)
    state = _apply_options(state, focus, args)
    heads, focuses = _selection(state, focus, args)

    from .compute import run_state

    views: list[ViewData] = []
    for head_focus in focuses:
        with warnings.catch_warnings():
            # A model's arrays are read-only (states share them) and the engine writes no input:
            # torch's warning about that would break the promise of a silent stderr.
            warnings.filterwarnings("ignore", message="The given NumPy array is not writable")
            # numpy's overflow warnings are blocks of lines; the diagnostics say it in one.
            warnings.filterwarnings("ignore", category=RuntimeWarning)
            outcome = run_state(state, 0, head_focus)
        if outcome.error is not None or outcome.view is None:
            raise RenderError(
                fill(_LINE, name=source, problem=outcome.error or QT_TRANSLATE_NOOP("Render", "no result"))
            )
        views.append(outcome.view)
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
        _draw_grid(views, heads, grid_batch, out, source=source, state=state, focus=focus, colormap=colormap, size=size)
    else:
        batches = None if args.batch is None else [args.batch]
        _draw(views[0], out, source=source, state=state, focus=focus, batches=batches, colormap=colormap, size=size)
    for line in lines:
        _say(line, sys.stdout)
    if warning is not None:
        _say(f"{PROG}: {warning}", sys.stderr)
    return 0


def _overflow_warning(views: Sequence[ViewData]) -> str | None:
    """The engine's line about scores that overflowed (the weights drawn are NaN there), once."""
    from .engine.diagnose import OVERFLOW_TEMPLATES

    for view in views:
        for line in view.warnings:
            if isinstance(line, Message) and line.source in OVERFLOW_TEMPLATES:
                return line
    return None


IMAGE_SUFFIXES = (".png", ".svg")
ARRAY_SUFFIXES = (".npy", ".csv")


def _focus(state: State, shown: Focus, args: argparse.Namespace, name: str) -> Focus:
    """The head to draw: ``--layer``/``--head`` where given (checked against the run; the book's
    input has one call of one head), else the one ``shown`` (a session's, a file's)."""
    layer = shown.layer if args.layer is None else args.layer
    head = shown.head if args.head is None else args.head
    run = state.run
    if not 0 <= layer < run.layers:
        raise RenderError(
            plural(
                run.layers,
                QT_TRANSLATE_NOOP("Render", "--layer {layer} is out of range: {name} has {n} layer, 0"),
                QT_TRANSLATE_NOOP("Render", "--layer {layer} is out of range: {name} has {n} layers, 0-{last}"),
                layer=layer,
                name=name,
                last=run.layers - 1,
            ),
            EXIT_USAGE,
        )
    heads = run.heads(layer)
    if not 0 <= head < heads:
        raise RenderError(
            plural(
                heads,
                QT_TRANSLATE_NOOP("Render", "--head {head} is out of range: layer {layer} of {name} has {n} head, 0"),
                QT_TRANSLATE_NOOP(
                    "Render", "--head {head} is out of range: layer {layer} of {name} has {n} heads, 0-{last}"
                ),
                head=head,
                layer=layer,
                name=name,
                last=heads - 1,
            ),
            EXIT_USAGE,
        )
    return Focus(layer, head)


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
    from .io import AttnvizFileError, save_arrays, save_csv

    try:
        if out.suffix.lower() == ".csv":
            save_csv(out, weights, block="head" if grid else "batch")
        else:
            save_arrays(out, {"weights": weights})
    except AttnvizFileError as exc:
        raise RenderError(exception_message(exc)) from exc


def _check_out_dir(out: Path) -> None:
    # Checked before any work, so a typo in the folder does not cost a computation.
    parent = out.parent if str(out.parent) else Path(".")
    if not parent.is_dir():
        raise RenderError(
            fill(
                _LINE,
                name=str(out),
                problem=fill(
                    QT_TRANSLATE_NOOP("Render", "cannot be written (the folder {folder} does not exist)"),
                    folder=str(parent),
                ),
            )
        )
    if out.is_dir():
        raise RenderError(
            fill(_LINE, name=str(out), problem=QT_TRANSLATE_NOOP("Render", "is a folder, not an image file"))
        )


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
    from .ui.heatmap.colormaps import canonical_colormap_name

    try:
        return canonical_colormap_name(name)
    except ValueError as exc:
        raise RenderError(fill(_LINE, name="--colormap", problem=exception_message(exc)), EXIT_USAGE) from exc


def _load(args: argparse.Namespace, notes: list[str]) -> tuple[State, Focus, str]:
    """The state of ``--load``, the head it shows first, and its name."""
    from .io import AttnvizFileError, guess_roles, is_capture_file, load_capture, load_tensor_file
    from .io.roles import ALL_ROLES
    from .io.state_io import load_state_and_focus, state_from_tensor_file, tensor_file_focus
    from .presets import DEFAULT_PRESET, PRESETS

    paths = [Path(p) for p in args.load]
    path = paths[0]
    try:
        if len(paths) > 1:
            return _load_ranks(paths, args)
        if is_capture_file(path):
            # A capture (attnviz.capture): told by its content, whatever its name.
            if args.role:
                raise RenderError(
                    fill(
                        _LINE,
                        name=path.name,
                        problem=QT_TRANSLATE_NOOP("Render", "--role applies to tensor files, not captures"),
                    ),
                    EXIT_USAGE,
                )
            return State.from_run(load_capture(path)), Focus(), path.name
        if is_session_path(path):
            if args.role:
                raise RenderError(
                    fill(
                        _LINE,
                        name=path.name,
                        problem=QT_TRANSLATE_NOOP("Render", "--role applies to tensor files, not sessions"),
                    ),
                    EXIT_USAGE,
                )
            state, shown = load_state_and_focus(path, notes=notes)
            return state, shown, path.name
        tf = load_tensor_file(path)
        roles = guess_roles(tf)
        for item in args.role:
            role, sep, name = item.partition("=")
            if not sep or role not in ALL_ROLES:
                raise RenderError(
                    fill(
                        QT_TRANSLATE_NOOP("Render", "--role {item}: expected ROLE=NAME with ROLE one of {roles}"),
                        item=repr(item),
                        roles=", ".join(ALL_ROLES),
                    ),
                    EXIT_USAGE,
                )
            if name:
                roles[role] = name
            else:
                roles.pop(role, None)
        missing = [r for r in ("queries", "keys", "values") if r not in roles]
        if missing:
            names = ", ".join(f"{n} {shape}" for n, shape in ((n, tuple(a.shape)) for n, a in tf.arrays.items()))
            raise RenderError(
                fill(
                    _LINE,
                    name=path.name,
                    problem=fill(
                        QT_TRANSLATE_NOOP(
                            "Render",
                            "cannot tell which array is {roles} (arrays: {arrays}); name them with --role {first}=NAME",
                        ),
                        roles=" / ".join(missing),
                        arrays=names,
                        first=missing[0],
                    ),
                )
            )
        base = PRESETS[DEFAULT_PRESET].build()
        # The grid shows every head: no head is chosen (nor said to be).
        head = 0 if args.heads else args.head
        state = state_from_tensor_file(tf, roles, head, base, layer=args.layer, notes=notes)
        return state, tensor_file_focus(state, args.layer, head), path.name
    except AttnvizFileError as exc:
        raise RenderError(exception_message(exc)) from exc


def _load_ranks(paths: list[Path], args: argparse.Namespace) -> tuple[State, Focus, str]:
    """Several captures: the ranks of one distributed run, merged (``attnviz.capture.merge``)."""
    from .io import load_capture
    from .model_run import ModelRunError

    if args.role:
        raise RenderError(
            fill(
                _LINE,
                name=paths[0].name,
                problem=QT_TRANSLATE_NOOP("Render", "--role applies to tensor files, not captures"),
            ),
            EXIT_USAGE,
        )
    runs = [load_capture(p) for p in paths]
    from .capture.merge import merge_runs

    try:
        run = merge_runs(runs)
    except ModelRunError as exc:
        raise RenderError(exception_message(exc)) from exc
    return State.from_run(run), Focus(), " + ".join(p.name for p in paths)


def _apply_options(state: State, focus: Focus, args: argparse.Namespace) -> State:
    """The settings given on the command line applied (``--causal`` to the call drawn)."""
    changes: dict[str, Any] = {}
    for option, key in (
        ("scoring", "scoring"),
        ("mask_mode", "mask_mode"),
        ("lens_mode", "lens_mode"),
        ("dtype", "dtype"),
        ("device", "device"),
    ):
        value = getattr(args, option)
        if value is not None:
            changes[key] = value
    if args.causal is not None:
        changes["causal"] = None if args.causal == "off" else args.causal
    if not changes:
        return state
    # As the settings panel does: parameters go with another scoring function.
    return SetSettings(changes).apply(state, focus)[0]


def figure_for(
    view: ViewData,
    state: State,
    *,
    source: str,
    focus: Focus = Focus(),
    batches: list[int] | None = None,
    colormap: str | None = None,
    size: tuple[int, int] | None = None,
) -> WeightsFigure:
    """The figure ``attnviz render`` saves, laid out off screen (a QApplication must exist).

    Public so a script or test can find where each cell is (``figure.cell_point``): the same
    arguments always give the same layout. Raises ``ValueError`` for a size that is too small.
    """
    from .render_figures import label_maps
    from .ui.files.export import build_weights_figure, figure_subtitle

    figure = build_weights_figure(
        view,
        batches=batches,
        title=_title(source, state, focus),
        subtitle=figure_subtitle(state, focus),
        colormap=colormap,
        size=size,
    )
    label_maps(figure, view, state.head_view(focus))
    return figure


def _title(source: str, state: State, focus: Focus) -> str:
    """The picture's title: the file, and the layer and head drawn when there is a choice."""
    if state.run.single_head:
        return f"{source}: attention weights"
    return f"{source}: attention weights, layer {focus.layer}, head {focus.head}"


def _draw(
    view: ViewData,
    out: Path,
    *,
    source: str,
    state: State,
    focus: Focus,
    batches: list[int] | None,
    colormap: str | None,
    size: tuple[int, int] | None,
) -> None:
    with _quiet_qt():
        _app = _application()
        try:
            figure = figure_for(view, state, source=source, focus=focus, batches=batches, colormap=colormap, size=size)
        except ValueError as exc:
            raise RenderError(fill(_LINE, name="--size", problem=exception_message(exc)), EXIT_USAGE) from exc
        _save(figure, out)


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
) -> WeightsFigure:
    """The figure ``attnviz render --heads all`` saves (``figure.maps[i]`` is head ``heads[i]``
    of call ``focus.layer``), laid out off screen (a QApplication must exist). Raises
    ``ValueError`` for a size too small."""
    from .render_figures import build_heads_grid
    from .ui.files.export import figure_subtitle

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
    )


def _draw_grid(
    views: Sequence[ViewData],
    heads: Sequence[int],
    batch: int,
    out: Path,
    *,
    source: str,
    state: State,
    focus: Focus,
    colormap: str | None,
    size: tuple[int, int] | None,
) -> None:
    with _quiet_qt():
        _app = _application()
        try:
            figure = grid_for(views, heads, batch, state, source=source, focus=focus, colormap=colormap, size=size)
        except ValueError as exc:
            raise RenderError(fill(_LINE, name="--size", problem=exception_message(exc)), EXIT_USAGE) from exc
        _save(figure, out)


def _save(figure: WeightsFigure, out: Path) -> None:
    from .ui.files.export import ExportError

    try:
        figure.save(out)
    except ExportError as exc:
        raise RenderError(exception_message(exc)) from exc
    finally:
        figure.close()


@contextlib.contextmanager
def _quiet_qt() -> Iterator[None]:
    """Qt chats on stderr ("This plugin does not support propagateSizeHints()"); a render's
    stderr is for its one failure line, so only Qt's own critical and fatal messages pass."""
    from PySide6.QtCore import QtMsgType, qInstallMessageHandler

    def quiet(kind: QtMsgType, _context: object, message: str) -> None:
        if kind in (QtMsgType.QtCriticalMsg, QtMsgType.QtFatalMsg):
            _fail_line(f"Qt: {message}")

    previous = qInstallMessageHandler(quiet)
    try:
        yield
    finally:
        qInstallMessageHandler(previous)


def _application() -> QCoreApplication:
    """The application: the one there is when called from inside one (tests, the GUI), else a
    new QApplication (drawing needs one), on the offscreen platform when there is no display."""
    _ensure_platform()
    from PySide6.QtWidgets import QApplication

    with _quiet_qt():
        return QApplication.instance() or QApplication([sys.argv[0] if sys.argv else "attnviz"])


def _ensure_platform() -> None:
    """Use Qt's offscreen platform when there is no display to connect to."""
    if os.environ.get("QT_QPA_PLATFORM"):
        return
    if sys.platform.startswith(("win", "darwin")):
        return  # these always have a window system; nothing is shown anyway
    if not (os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY")):
        os.environ["QT_QPA_PLATFORM"] = "offscreen"


if __name__ == "__main__":
    sys.exit(main())
