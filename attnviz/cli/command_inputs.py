"""What ``attnviz render`` and ``attnviz code`` compute from: a preset or a file (``--preset``,
``--load``, ``--role``), the head asked for (``--layer``, ``--head``), and the settings given on
the command line, one option per setting declared in ``attnviz.state.settings`` (``--mask-mode``,
``--window``, ``--train``...), each checked by its declaration before any file is read.

Every refusal is a ``terminal.CommandError`` (one line; ``EXIT_USAGE`` for a bad option). No
Qt and no torch here.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from attnviz.output.terminal import EXIT_USAGE, CommandError
from attnviz.state.document import SetSettings, State
from attnviz.state.run import Focus
from attnviz.state.settings import SETTINGS, Choice, Flag, Number, Whole, shown_value
from attnviz.text.tr import QT_TRANSLATE_NOOP, Message, exception_message, message, plural

__all__ = [
    "add_input_options",
    "add_setting_options",
    "command_state",
    "head_focus",
    "input_paths",
    "read_input",
    "setting_changes",
]

# "<what>: <what is wrong>" lines: the shape is the same in every language shipped, so the
# template is left unmarked (empty context) and only the values are translated.
LINE = "{name}: {problem}"
_DEST = "setting_"  # argparse's names of the settings' options, clear of the other options'
_OLD = "old_setting_"  # the same, given by an old name of the option


def add_input_options(
    parser: argparse.ArgumentParser, *, role_help: str, list_presets: bool = False, ranks: bool = False
) -> None:
    """``--preset`` or ``--load`` (one of them required, or ``--list-presets`` where asked),
    ``--layer``, ``--role``. ``ranks``: ``--load`` may be repeated, for the captures of the ranks
    of one distributed run (merged)."""
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument("--preset", metavar="NAME", help="one of the presets (see attnviz render --list-presets)")
    if ranks:
        source.add_argument(
            "--load",
            metavar="FILE",
            action="append",
            help="a session (.attnviz), capture or tensor file (repeat it for the ranks' captures of one "
            "distributed run)",
        )
    else:
        source.add_argument("--load", metavar="FILE", help="a session (.attnviz), capture or tensor file")
    if list_presets:
        source.add_argument("--list-presets", action="store_true", help="list the presets and exit")
    parser.add_argument("--layer", type=int, metavar="N", help="layer of a model's tensors (default 0)")
    parser.add_argument("--role", action="append", default=[], metavar="ROLE=NAME", help=role_help)


def input_paths(args: argparse.Namespace) -> list[str]:
    """The files a command reads (``--load``, once or repeated): what its outputs may not overwrite."""
    loaded = getattr(args, "load", None)
    if loaded is None:
        return []
    return [loaded] if isinstance(loaded, str) else [str(each) for each in loaded]


def add_setting_options(parser: argparse.ArgumentParser) -> None:
    """One option per declared setting that has one, with the choices the catalogue has now."""
    group = parser.add_argument_group("settings (default: as the preset or file has them)")
    for setting in SETTINGS.values():
        option = setting.command_option
        if option is None:
            continue
        text = setting.help or str(setting.undo_name)
        dest = _DEST + setting.name
        if isinstance(setting, Choice):
            group.add_argument(option, dest=dest, choices=setting.command_words(), help=text)
        elif isinstance(setting, Flag):
            group.add_argument(option, dest=dest, action=argparse.BooleanOptionalAction, default=None, help=text)
        elif isinstance(setting, Whole):
            group.add_argument(option, dest=dest, type=int, metavar="N", help=text)
        elif isinstance(setting, Number):
            group.add_argument(option, dest=dest, type=float, metavar="X", help=text)
        else:
            group.add_argument(option, dest=dest, metavar="NAME", help=text)
        if setting.old_option:
            # Its old name, out of --help: a script written with it keeps working, with a note.
            kind = float if isinstance(setting, Number) else int if isinstance(setting, Whole) else str
            group.add_argument(setting.old_option, dest=_OLD + setting.name, type=kind, help=argparse.SUPPRESS)


def setting_changes(args: argparse.Namespace) -> dict[str, Any]:
    """The settings given on the command line, each checked by its declaration (a value out of
    its range is a ``CommandError`` naming the option and what it accepts)."""
    changes: dict[str, Any] = {}
    for setting in SETTINGS.values():
        value = getattr(args, _DEST + setting.name, None)
        if value is None:
            value = getattr(args, _OLD + setting.name, None)
        if value is None or setting.command_option is None:
            continue
        if isinstance(setting, Choice):
            value = setting.from_word(value)
        elif not setting.accepts(value):
            raise CommandError(
                message(
                    QT_TRANSLATE_NOOP("CommandLine", "{option} {value}: expected {expected}"),
                    option=setting.command_option,
                    value=shown_value(value),
                    expected=setting.expected(null=False),
                ),
                EXIT_USAGE,
            )
        changes[setting.name] = value
    return changes


def renamed_options(args: argparse.Namespace) -> list[Message]:
    """A note for each option given by its old name ("--scale is now --score-multiplier")."""
    return [
        message(
            QT_TRANSLATE_NOOP("CommandLine", "{old} is now {new} (the old name still works, for now)"),
            old=setting.old_option,
            new=setting.command_option,
        )
        for setting in SETTINGS.values()
        if setting.old_option and getattr(args, _OLD + setting.name, None) is not None
    ]


def command_state(args: argparse.Namespace, notes: list[str], *, file_head: int | None) -> tuple[State, Focus, str]:
    """What a command computes from: the preset or file (``read_input``; ``file_head`` the head
    taken out of a tensor file's 4-D arrays), the head asked for (``head_focus``) and the state
    with the settings given applied, as the settings panel makes them (a call's own written into
    the call on show; parameters go with another scoring function). The settings are checked
    first, before any file is read. Returns the state, the head and the input's name."""
    changes = setting_changes(args)
    notes.extend(renamed_options(args))
    state, shown, source = read_input(args, notes, head=file_head)
    focus = head_focus(state, shown, args.layer, args.head, source)
    if changes:
        state = SetSettings(changes).apply(state, focus)[0]
    return state, focus, source


def read_input(args: argparse.Namespace, notes: list[str], *, head: int | None = None) -> tuple[State, Focus, str]:
    """The state of ``--preset`` or ``--load``, the head it shows first, and its name. ``head``:
    the head to take out of a tensor file's 4-D arrays (None: the file's first, with a note)."""
    from attnviz.teaching.lessons import ALL_PRESETS

    if args.preset is None:
        return _load(args, notes, head)
    if args.preset not in ALL_PRESETS:
        raise CommandError(
            message(
                QT_TRANSLATE_NOOP("CommandLine", "unknown preset {name}; choose one of {choices}"),
                name=repr(args.preset),
                choices=", ".join(ALL_PRESETS),
            ),
            EXIT_USAGE,
        )
    return ALL_PRESETS[args.preset].build(), Focus(), args.preset


def _load(args: argparse.Namespace, notes: list[str], head: int | None) -> tuple[State, Focus, str]:
    from attnviz.io import AttnvizFileError, guess_roles, is_capture_file, load_capture, load_tensor_file
    from attnviz.io.roles import ALL_ROLES
    from attnviz.io.session import is_session_path
    from attnviz.io.session_state import load_state_and_focus
    from attnviz.io.tensor_import import state_from_tensor_file, tensor_file_focus
    from attnviz.teaching.presets import DEFAULT_PRESET, PRESETS

    paths = [Path(p) for p in args.load] if isinstance(args.load, list) else [Path(args.load)]
    path = paths[0]
    try:
        if len(paths) > 1:
            return _load_ranks(paths, args)
        capture = is_capture_file(path)  # a capture (attnviz.capture): told by its content, whatever its name
        if capture or is_session_path(path):
            if args.role:
                not_here = (
                    QT_TRANSLATE_NOOP("CommandLine", "--role applies to tensor files, not captures")
                    if capture
                    else QT_TRANSLATE_NOOP("CommandLine", "--role applies to tensor files, not sessions")
                )
                raise CommandError(message(LINE, name=path.name, problem=not_here), EXIT_USAGE)
            if capture:
                return State.from_run(load_capture(path)), Focus(), path.name
            state, shown = load_state_and_focus(path, notes=notes)
            return state, shown, path.name
        tf = load_tensor_file(path)
        roles = guess_roles(tf)
        for item in args.role:
            role, sep, name = item.partition("=")
            if not sep or role not in ALL_ROLES:
                raise CommandError(
                    message(
                        QT_TRANSLATE_NOOP("CommandLine", "--role {item}: expected ROLE=NAME with ROLE one of {roles}"),
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
            raise CommandError(
                message(
                    LINE,
                    name=path.name,
                    problem=message(
                        QT_TRANSLATE_NOOP(
                            "CommandLine",
                            "cannot tell which array is {roles} (arrays: {arrays}); name them with --role {first}=NAME",
                        ),
                        roles=" / ".join(missing),
                        arrays=names,
                        first=missing[0],
                    ),
                )
            )
        base = PRESETS[DEFAULT_PRESET].build()
        state = state_from_tensor_file(tf, roles, head, base, layer=args.layer, notes=notes)
        return state, tensor_file_focus(state, args.layer, head), path.name
    except AttnvizFileError as exc:
        raise CommandError(exception_message(exc)) from exc


def _load_ranks(paths: list[Path], args: argparse.Namespace) -> tuple[State, Focus, str]:
    """Several captures: the ranks of one distributed run, merged (``attnviz.capture.merge``)."""
    from attnviz.capture.merge import merge
    from attnviz.state.run import ModelRunError

    if args.role:
        not_here = QT_TRANSLATE_NOOP("CommandLine", "--role applies to tensor files, not captures")
        raise CommandError(message(LINE, name=paths[0].name, problem=not_here), EXIT_USAGE)
    try:
        run = merge(paths)  # AttnvizFileError: caught by the caller
    except ModelRunError as exc:
        raise CommandError(exception_message(exc)) from exc
    return State.from_run(run), Focus(), " + ".join(p.name for p in paths)


def head_focus(state: State, shown: Focus, layer: int | None, head: int | None, name: str) -> Focus:
    """The head to use: ``layer`` and ``head`` where given (checked against the run; the book's
    input has one call of one head), else the one ``shown`` (a session's, a file's)."""
    layer = shown.layer if layer is None else layer
    head = shown.head if head is None else head
    run = state.run
    if not 0 <= layer < run.layers:
        raise CommandError(
            plural(
                run.layers,
                QT_TRANSLATE_NOOP("CommandLine", "--layer {layer} is out of range: {name} has {n} layer, 0"),
                QT_TRANSLATE_NOOP("CommandLine", "--layer {layer} is out of range: {name} has {n} layers, 0-{last}"),
                layer=layer,
                name=name,
                last=run.layers - 1,
            ),
            EXIT_USAGE,
        )
    heads = run.heads(layer)
    if not 0 <= head < heads:
        raise CommandError(
            plural(
                heads,
                QT_TRANSLATE_NOOP(
                    "CommandLine", "--head {head} is out of range: layer {layer} of {name} has {n} head, 0"
                ),
                QT_TRANSLATE_NOOP(
                    "CommandLine", "--head {head} is out of range: layer {layer} of {name} has {n} heads, 0-{last}"
                ),
                head=head,
                layer=layer,
                name=name,
                last=heads - 1,
            ),
            EXIT_USAGE,
        )
    return Focus(layer, head)
