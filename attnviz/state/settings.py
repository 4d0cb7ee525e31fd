"""Every setting of a computation, declared once with its rules.

After Orange3's ``Setting`` and napari's ``EventedModel``: a field, its rules and how its change
is named are declared in one place and read everywhere. Each declaration gives the setting's
type (its class: ``Choice``, ``Whole``, ``Number``, ``Flag``, ``DeviceName``), default, choices or
range, caption and tooltip (marked for translation), the name undo texts give it, the panel it
is shown in, how a file's value is checked (``Setting.problem``) and its command-line option.
Then:

* ``document.Settings`` takes its defaults from here (``tests/test_settings.py`` checks that
  its fields are the declared settings that are not a call's own);
* the settings panels (``ui.app.controls``) build their spin boxes, combo boxes and check boxes
  from here: ranges, entries, captions, tooltips, what is greyed out (``Setting.applies``);
* the session reader (``io.settings_file``) checks each value of a file with ``problem``;
* undo texts name a change with ``change_text`` ("Change dropout");
* ``attnviz render`` has one option per setting (``Setting.option``), checked the same way.

No Qt and no torch: the window reads this before PyTorch has loaded. The scorings and mask
modes to choose from are the catalogue's (``attnviz.state.catalog``), read when asked, so a scoring
function registered later (``engine.scoring.register``) is a choice everywhere from then on.
``SETTINGS`` is itself a ``catalog.Catalogue``: a declaration registered again replaces the
old one and tells the subscribers.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from attnviz.state import catalog
from attnviz.text.tr import QT_TRANSLATE_NOOP, joined, message

__all__ = [
    "ATTENTION",
    "INT_MAX",
    "LONG_MASKS",
    "MAX_HIDDEN",
    "SETTINGS",
    "Choice",
    "DeviceName",
    "Flag",
    "Number",
    "Setting",
    "Whole",
    "call_settings",
    "change_text",
    "in_group",
    "resets_params",
    "settings_problem",
    "shown_value",
]

#: The panels settings are shown in (a declaration's ``group``; "": in none).
ATTENTION = "attention"
LONG_MASKS = "long_masks"

#: The largest whole number a spin box holds (a C int): the seeds' and long-context masks' top.
INT_MAX = 2**31 - 1
#: Additive attention's hidden size h: W_q and W_k are h x d, so a typo must not ask for more.
MAX_HIDDEN = 1024

# How a file's value is refused: the same sentence for every setting, with what it accepts.
_FILE_PROBLEM = QT_TRANSLATE_NOOP("FileErrors", "setting '{name}' is {value}; expected {expected}")
_NOT_A_SETTING = QT_TRANSLATE_NOOP("FileErrors", "'{name}' is not a setting")


def shown_value(value: Any) -> str:
    """A value from a file or a command line, bounded for a message."""
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


@dataclass(frozen=True, kw_only=True)
class Setting:
    """One setting: what every kind of setting declares. Subclasses say which values it takes."""

    name: str
    default: Any
    #: How undo texts name it ("Change {undo_name}"), marked for translation.
    undo_name: str
    #: Its caption in a settings panel (marked, with its accelerator); "": not shown in one.
    label: str = ""
    #: Its tooltip in the panel (marked).
    tooltip: str = ""
    #: The panel it is shown in (``ATTENTION``, ``LONG_MASKS``), or "" for none.
    group: str = ""
    #: Shown on the row of that setting rather than on a row of its own.
    beside: str = ""
    #: Its ``attnviz render`` option (None: ``--`` and the name with dashes; "": none).
    option: str | None = None
    #: The option's help (English, as argparse's own words are); "": the undo name.
    help: str = ""
    #: An earlier name of the option, still accepted with a note saying the new one ("": none).
    old_option: str = ""
    #: A call's own (a model's calls differ in it): ``SetSettings`` writes it into the call on
    #: show, and ``document.Settings`` has no field for it.
    of_call: bool = False
    #: Changing it makes the learnable parameters start again from their seed (they no longer
    #: fit, or belong to another scoring function).
    resets_params: bool = False
    #: Whether it changes anything under these settings (the panel greys it out when not).
    applies: Callable[[Any], bool] | None = None

    @property
    def command_option(self) -> str | None:
        """The command-line option (``--mask-mode``), or None."""
        if self.option is None:
            return "--" + self.name.replace("_", "-")
        return self.option or None

    @property
    def optional(self) -> bool:
        """None is a value (no causal mask; the scale of the call's own scoring)."""
        return self.default is None

    def accepts(self, value: Any) -> bool:
        raise NotImplementedError

    def expected(self, *, null: bool = True) -> str:
        """What it accepts, as a phrase for messages ("a whole number from 0 to 10"); ``null``:
        say that None (JSON's null) is accepted, where it is."""
        raise NotImplementedError

    def from_file(self, value: Any) -> Any:
        """A file's value as the setting holds it (checked with ``problem`` first)."""
        return value

    def problem(self, value: Any) -> str | None:
        """Why a file's ``value`` is refused (one line, translatable), or None."""
        if self.accepts(value):
            return None
        return message(_FILE_PROBLEM, name=self.name, value=shown_value(value), expected=self.expected())


@dataclass(frozen=True, kw_only=True)
class Choice(Setting):
    """One of a list of values, each with its label."""

    #: The choices, value -> marked label, read each time (a catalogue grows).
    options: Callable[[], Mapping[Any, str]]
    #: The catalogue the choices come from, if it tells when one is registered.
    registry: catalog.Catalogue[Any] | None = None
    #: How None is typed on the command line.
    none_word: str = "off"

    def choices(self) -> dict[Any, str]:
        return dict(self.options())

    def accepts(self, value: Any) -> bool:
        try:
            return value in self.choices()
        except TypeError:  # a list or a dict from a file: not hashable, not a choice
            return False

    def expected(self, *, null: bool = True) -> str:
        words = ["null" if key is None else str(key) for key in self.choices() if key is not None or null]
        return message(QT_TRANSLATE_NOOP("Settings", "one of {choices}"), choices=", ".join(words))

    def command_words(self) -> list[str]:
        """The choices as typed on the command line (None as ``none_word``)."""
        return [self.none_word if key is None else str(key) for key in self.choices()]

    def from_word(self, word: str) -> Any:
        return None if self.optional and word == self.none_word else word


@dataclass(frozen=True, kw_only=True)
class Whole(Setting):
    """A whole number from ``low`` to ``high``."""

    low: int
    high: int
    #: What the spin box shows for 0 (a mask that is off), if anything.
    zero_text: str = ""

    def accepts(self, value: Any) -> bool:
        return isinstance(value, int) and not isinstance(value, bool) and self.low <= value <= self.high

    def expected(self, *, null: bool = True) -> str:
        return message(
            QT_TRANSLATE_NOOP("Settings", "a whole number from {low} to {high}"), low=self.low, high=self.high
        )


@dataclass(frozen=True, kw_only=True)
class Number(Setting):
    """A real number from ``low`` to ``high`` (above ``low`` when ``above``); None too when the
    default is None."""

    low: float
    high: float = math.inf
    above: bool = False
    #: The spin box's step and decimals.
    step: float = 0.1
    decimals: int = 2

    def accepts(self, value: Any) -> bool:
        if value is None:
            return self.optional
        if not isinstance(value, (int, float)) or isinstance(value, bool) or not math.isfinite(value):
            return False
        return (value > self.low if self.above else value >= self.low) and value <= self.high

    def expected(self, *, null: bool = True) -> str:
        if self.above and math.isinf(self.high):
            phrase = message(QT_TRANSLATE_NOOP("Settings", "a number above {low}"), low=_number(self.low))
        else:
            phrase = message(
                QT_TRANSLATE_NOOP("Settings", "a number from {low} to {high}"),
                low=_number(self.low),
                high=_number(self.high),
            )
        if null and self.optional:
            return message(QT_TRANSLATE_NOOP("Settings", "null or {phrase}"), phrase=phrase)
        return phrase

    def from_file(self, value: Any) -> Any:
        return None if value is None else float(value)  # some JSON writers store 0.0 as 0


@dataclass(frozen=True, kw_only=True)
class Flag(Setting):
    """On or off."""

    def accepts(self, value: Any) -> bool:
        return isinstance(value, bool)

    def expected(self, *, null: bool = True) -> str:
        return QT_TRANSLATE_NOOP("Settings", "true or false")


@dataclass(frozen=True, kw_only=True)
class DeviceName(Setting):
    """A device: any name the engine resolves ("cpu", "cuda:1", "mps"); whether this machine has
    it is the engine's to say when it computes (a session saved on another machine still opens)."""

    def accepts(self, value: Any) -> bool:
        return isinstance(value, str) and bool(value.strip())

    def expected(self, *, null: bool = True) -> str:
        return QT_TRANSLATE_NOOP("Settings", 'a device name such as "cpu"')


def _number(value: float) -> str:
    return f"{value:g}"


def _scoring(settings: Any) -> catalog.ScoringInfo | None:
    return catalog.SCORINGS.get(settings.scoring)


def _uses_hidden(settings: Any) -> bool:
    info = _scoring(settings)
    return info is not None and info.uses_hidden


def _has_params(settings: Any) -> bool:
    info = _scoring(settings)
    return info is not None and bool(info.params)


def _drops(settings: Any) -> bool:
    return bool(settings.train) and settings.dropout > 0


def dropout_applies(settings: Any) -> bool:
    """Whether dropout changes the weights: training mode with p > 0."""
    return _drops(settings)


def _long_mask(name: str, label: str, undo_name: str, tooltip: str, help_text: str) -> Whole:
    return Whole(
        name=name,
        default=0,
        low=0,
        high=INT_MAX,
        zero_text=QT_TRANSLATE_NOOP("SettingsPanel", "off"),
        label=label,
        undo_name=undo_name,
        tooltip=tooltip,
        group=LONG_MASKS,
        help=help_text,
    )


#: Every setting, in the order the panels show them.
SETTINGS: catalog.Catalogue[Setting] = catalog.Catalogue(
    (
        Choice(
            name="scoring",
            default="additive",
            options=lambda: {name: catalog.SCORINGS.label(name) for name in catalog.SCORINGS},
            registry=catalog.SCORINGS,
            label=QT_TRANSLATE_NOOP("SettingsPanel", "&Scoring"),
            tooltip=QT_TRANSLATE_NOOP("SettingsPanel", "Scoring function a(q, k)"),
            undo_name=QT_TRANSLATE_NOOP("MainWindow", "scoring function"),
            group=ATTENTION,
            resets_params=True,
        ),
        Whole(
            name="num_hiddens",
            default=8,
            low=1,
            high=MAX_HIDDEN,
            label=QT_TRANSLATE_NOOP("SettingsPanel", "&Hidden size"),
            tooltip=QT_TRANSLATE_NOOP("SettingsPanel", "Hidden size h of additive attention (W_q, W_k are h x d)"),
            undo_name=QT_TRANSLATE_NOOP("MainWindow", "hidden size"),
            group=ATTENTION,
            option="--hidden-size",
            help="hidden size h of additive attention",
            resets_params=True,
            applies=_uses_hidden,
        ),
        Whole(
            name="param_seed",
            default=0,
            low=0,
            high=INT_MAX,
            label=QT_TRANSLATE_NOOP("SettingsPanel", "&Parameter seed"),
            tooltip=QT_TRANSLATE_NOOP("SettingsPanel", "Seed of the learnable parameters (additive, bilinear)"),
            undo_name=QT_TRANSLATE_NOOP("MainWindow", "parameter seed"),
            group=ATTENTION,
            help="seed of the learnable parameters (additive, bilinear)",
            resets_params=True,
            applies=_has_params,
        ),
        Choice(
            name="lens_mode",
            default="1d",
            options=lambda: catalog.LENS_OPTIONS,
            label=QT_TRANSLATE_NOOP("SettingsPanel", "&Valid lengths"),
            tooltip=QT_TRANSLATE_NOOP(
                "SettingsPanel", "Valid lengths: none, one per batch element (1-D), or one per query (2-D)"
            ),
            undo_name=QT_TRANSLATE_NOOP("MainWindow", "valid lengths"),
            group=ATTENTION,
            help="valid lengths: none, 1d or 2d",
        ),
        Choice(
            name="mask_mode",
            default="d2l",
            options=lambda: {name: catalog.MASK_MODES.label(name) for name in catalog.MASK_MODES},
            registry=catalog.MASK_MODES,
            label=QT_TRANSLATE_NOOP("SettingsPanel", "&Mask mode"),
            tooltip=QT_TRANSLATE_NOOP(
                "SettingsPanel",
                "How masked keys are applied: the book's -1e6 fill, strict, or the conventions (and "
                "bugs) of other libraries",
            ),
            undo_name=QT_TRANSLATE_NOOP("MainWindow", "mask mode"),
            group=ATTENTION,
            help="how masked keys are applied",
        ),
        Choice(
            name="causal",
            default=None,
            options=lambda: catalog.CAUSAL_OPTIONS,
            label=QT_TRANSLATE_NOOP("SettingsPanel", "&Causal"),
            tooltip=QT_TRANSLATE_NOOP(
                "SettingsPanel", "Causal mask: query i sees keys up to i (top-left) or up to i + K - Q (bottom-right)"
            ),
            undo_name=QT_TRANSLATE_NOOP("MainWindow", "causal mask"),
            group=ATTENTION,
            help="causal mask alignment (of the call drawn)",
            of_call=True,
        ),
        DeviceName(
            name="device",
            default="cpu",
            label=QT_TRANSLATE_NOOP("SettingsPanel", "&Device"),
            tooltip=QT_TRANSLATE_NOOP("SettingsPanel", "Device the attention runs on"),
            undo_name=QT_TRANSLATE_NOOP("MainWindow", "device"),
            group=ATTENTION,
            help="device to compute on (default: as saved, else cpu)",
        ),
        Choice(
            name="dtype",
            default="float32",
            options=lambda: catalog.DTYPE_OPTIONS,
            label=QT_TRANSLATE_NOOP("SettingsPanel", "D&type"),
            tooltip=QT_TRANSLATE_NOOP(
                "SettingsPanel", "Floating-point type of the computation; float16 shows the -1e6 fill overflowing"
            ),
            undo_name=QT_TRANSLATE_NOOP("MainWindow", "dtype"),
            group=ATTENTION,
            help="floating-point type of the computation",
        ),
        Number(
            name="dropout",
            default=0.0,
            low=0.0,
            high=1.0,
            step=0.05,
            decimals=2,
            label=QT_TRANSLATE_NOOP("SettingsPanel", "D&ropout"),
            tooltip=QT_TRANSLATE_NOOP(
                "SettingsPanel", "Dropout probability on the attention weights (only in training mode)"
            ),
            undo_name=QT_TRANSLATE_NOOP("MainWindow", "dropout"),
            group=ATTENTION,
            help="dropout probability on the weights (with --train)",
        ),
        Flag(
            name="train",
            default=False,
            label=QT_TRANSLATE_NOOP("SettingsPanel", "&Training"),
            tooltip=QT_TRANSLATE_NOOP(
                "SettingsPanel", "Training mode: apply dropout to the weights (evaluation mode ignores it)"
            ),
            undo_name=QT_TRANSLATE_NOOP("MainWindow", "training mode"),
            group=ATTENTION,
            beside="dropout",
            help="training mode: apply dropout to the weights",
        ),
        Whole(
            name="dropout_seed",
            default=0,
            low=0,
            high=INT_MAX,
            label=QT_TRANSLATE_NOOP("SettingsPanel", "Dropout s&eed"),
            tooltip=QT_TRANSLATE_NOOP(
                "SettingsPanel", "Seed of the dropout mask, so a training-mode picture is reproducible"
            ),
            undo_name=QT_TRANSLATE_NOOP("MainWindow", "dropout seed"),
            group=ATTENTION,
            help="seed of the dropout mask",
            applies=_drops,
        ),
        _long_mask(
            "window",
            QT_TRANSLATE_NOOP("SettingsPanel", "&Window"),
            QT_TRANSLATE_NOOP("MainWindow", "sliding window"),
            QT_TRANSLATE_NOOP(
                "SettingsPanel",
                "Sliding window: a query sees the keys within this distance (|i - j| < w; "
                "only earlier ones when Causal is on). 0: off",
            ),
            "sliding window of this many keys (0: off)",
        ),
        _long_mask(
            "sinks",
            QT_TRANSLATE_NOOP("SettingsPanel", "S&inks"),
            QT_TRANSLATE_NOOP("MainWindow", "attention sinks"),
            QT_TRANSLATE_NOOP(
                "SettingsPanel",
                "Attention sinks: the first keys every query keeps seeing beside its window "
                "(StreamingLLM). Needs a window. 0: off",
            ),
            "attention sinks: the first keys every query sees beside its window (0: off)",
        ),
        _long_mask(
            "prefix",
            QT_TRANSLATE_NOOP("SettingsPanel", "Pre&fix"),
            QT_TRANSLATE_NOOP("MainWindow", "prefix"),
            QT_TRANSLATE_NOOP(
                "SettingsPanel",
                "Prefix-LM: every query sees the first keys (the prefix), and causally after it. 0: off",
            ),
            "prefix-LM prefix length (0: off)",
        ),
        _long_mask(
            "chunk",
            QT_TRANSLATE_NOOP("SettingsPanel", "C&hunk"),
            QT_TRANSLATE_NOOP("MainWindow", "chunk size"),
            QT_TRANSLATE_NOOP(
                "SettingsPanel",
                "Chunked local attention: queries see the keys of their own chunk of this "
                "size (causally within it when Causal is on). 0: off",
            ),
            "chunked local attention: chunk size (0: off)",
        ),
        Flag(
            name="allow_nonfinite",
            default=False,
            undo_name=QT_TRANSLATE_NOOP("MainWindow", "NaN and infinite inputs"),
            help="let NaN and infinite inputs through, to see what masking does not remove",
        ),
        Number(
            name="scale",
            default=None,
            low=0.0,
            above=True,
            undo_name=QT_TRANSLATE_NOOP("MainWindow", "scale"),
            # Not --scale: the window's colour "Scale" is another thing (render's --color-range).
            option="--score-multiplier",
            old_option="--scale",
            help="the number the scores are multiplied by, SDPA's scale (of the call drawn; default: its own, "
            "1/sqrt(d) for scaled dot product)",
            of_call=True,
        ),
    )
)


def in_group(group: str) -> list[Setting]:
    """The settings shown in panel ``group``, in order."""
    return [setting for setting in SETTINGS.values() if setting.group == group]


def call_settings() -> tuple[str, ...]:
    """The settings that are a call's own (``Setting.of_call``)."""
    return tuple(setting.name for setting in SETTINGS.values() if setting.of_call)


def resets_params(changes: Mapping[str, Any]) -> bool:
    """Whether changing these settings sends the learnable parameters back to their seed."""
    return any(name in SETTINGS and SETTINGS[name].resets_params for name in changes)


def change_text(changes: Mapping[str, Any]) -> str:
    """The undo text of a change of these settings ("Change dropout"), marked for translation."""
    names = [SETTINGS[name].undo_name if name in SETTINGS else name for name in changes]
    if not names:
        return QT_TRANSLATE_NOOP("Undo", "Change setting")
    return message(
        QT_TRANSLATE_NOOP("MainWindow", "Change {names}"), names=names[0] if len(names) == 1 else joined(names)
    )


def settings_problem(name: str, value: Any) -> str | None:
    """Why ``value`` is refused for the setting ``name`` (one line, translatable), or None."""
    setting = SETTINGS.get(name)
    if setting is None:
        return message(_NOT_A_SETTING, name=name)
    return setting.problem(value)
