"""A lecture plan: the order in which a clicker's Page Down walks the chapter (no Qt).

A plan is a list of slides, each one of:

- ``Slide("example", name)``: one of the book's examples (``attnviz.teaching.presets``) in the main view;
- ``Slide("walk", name)``: that example's stage-by-stage walk in the pipeline (the walk takes
  the clicker's steps from its first step to its last, then hands it on);
- ``Slide("view", name)``: a lab (``VIEWS``: the masking lab, the scaling lab) on the example on show;
- ``Slide("lesson", name)``: a pitfall or an exercise (``attnviz.teaching.lessons``): Page Down reveals its
  answer before it moves on.

The order is data: a teacher reorders the slides and keeps the plan in a small JSON file
(``save_plan``, ``load_plan``) to share it. A file that is not a plan is refused with one line
(``LecturePlanError``) that says what is wrong and where.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal, cast

from attnviz.teaching.lessons import LESSONS
from attnviz.teaching.presets import PRESETS

__all__ = [
    "DEFAULT_PLAN",
    "KINDS",
    "PLAN_FORMAT",
    "VIEWS",
    "LecturePlan",
    "LecturePlanError",
    "Slide",
    "default_plan",
    "load_plan",
    "plan_from_json",
    "plan_to_json",
    "save_plan",
]

SlideKind = Literal["example", "walk", "view", "lesson"]
KINDS: tuple[SlideKind, ...] = ("example", "walk", "view", "lesson")
#: The views a plan may show by name (the window maps them to its tabs).
VIEWS = ("masking-lab", "scaling-lab")
#: What a plan file says it is, and the version of its format.
PLAN_FORMAT = "attnviz-lecture"
PLAN_VERSION = 1
#: A plan file is a few hundred bytes; anything far larger is not one (and is not read whole).
MAX_FILE_BYTES = 1 << 20


class LecturePlanError(ValueError):
    """A plan refused: one line that says what is wrong, and where."""


@dataclass(frozen=True)
class Slide:
    kind: SlideKind
    name: str

    def __post_init__(self) -> None:
        names: Iterable[str]
        if self.kind == "example" or self.kind == "walk":
            names = PRESETS
        elif self.kind == "lesson":
            names = LESSONS
        elif self.kind == "view":
            names = VIEWS
        else:
            raise LecturePlanError(f"unknown kind of slide {self.kind!r}: use one of {', '.join(KINDS)}")
        if self.name not in names:
            raise LecturePlanError(f"unknown {self.kind} {self.name!r}: use one of {', '.join(names)}")

    @property
    def example(self) -> str | None:
        """The example (or lesson) this slide loads; None for a view of whatever is on show."""
        return None if self.kind == "view" else self.name


@dataclass(frozen=True)
class LecturePlan:
    slides: tuple[Slide, ...]

    def __post_init__(self) -> None:
        if not self.slides:
            raise LecturePlanError("a lecture plan needs at least one slide")

    def __len__(self) -> int:
        return len(self.slides)

    def __getitem__(self, index: int) -> Slide:
        return self.slides[index]

    def index_of_example(self, name: str | None, near: int = 0) -> int | None:
        """The slide that loads example or lesson ``name`` closest to slide ``near`` (None: no
        slide does), so a lecture picked up after the menus loaded something goes on from there."""
        found = [i for i, slide in enumerate(self.slides) if name is not None and slide.example == name]
        return min(found, key=lambda i: (abs(i - near), i)) if found else None

    def reordered(self, order: Sequence[int]) -> LecturePlan:
        """The plan with its slides in ``order`` (indices into this plan; some may be left out)."""
        return LecturePlan(tuple(self.slides[i] for i in order))


def default_plan() -> LecturePlan:
    """The chapter's lecture: each of the book's examples followed by its stage walk, the masking
    lab, the scaling lab, the pitfalls and the exercises (in the order of the menus)."""
    slides: list[Slide] = []
    for name in PRESETS:
        slides += [Slide("example", name), Slide("walk", name)]
    # The labs on the last example (the masked softmax's 2-D valid lengths), before the lessons.
    slides += [Slide("view", "masking-lab"), Slide("view", "scaling-lab")]
    slides += [Slide("lesson", name) for name in LESSONS]
    return LecturePlan(tuple(slides))


DEFAULT_PLAN = default_plan()


def plan_to_json(plan: LecturePlan) -> str:
    slides = [{slide.kind: slide.name} for slide in plan.slides]
    return json.dumps({"format": PLAN_FORMAT, "version": PLAN_VERSION, "slides": slides}, indent=1) + "\n"


def plan_from_json(text: str) -> LecturePlan:
    """A plan from its JSON text; anything else is refused with one line (``LecturePlanError``)."""
    try:
        data = json.loads(text)
    except (json.JSONDecodeError, RecursionError) as error:
        raise LecturePlanError(
            f"not JSON ({error.msg if isinstance(error, json.JSONDecodeError) else 'too deep'})"
        ) from None
    if not isinstance(data, dict) or data.get("format") != PLAN_FORMAT:
        raise LecturePlanError(f'not a lecture plan (it must say "format": "{PLAN_FORMAT}")')
    version = data.get("version")
    if not isinstance(version, int) or isinstance(version, bool) or version > PLAN_VERSION or version < 1:
        raise LecturePlanError(f"version {version!r} of the lecture plan format: this attnviz reads version 1")
    raw = data.get("slides")
    if not isinstance(raw, list):
        raise LecturePlanError('"slides" must be a list of slides such as {"example": "additive-toy"}')
    slides = []
    for number, item in enumerate(raw, 1):
        if not isinstance(item, dict) or len(item) != 1:
            raise LecturePlanError(f'slide {number}: must be one pair such as {{"lesson": "pitfall-zero-length"}}')
        ((kind, name),) = item.items()
        if not isinstance(name, str):
            raise LecturePlanError(f"slide {number}: the name of the {kind} must be text")
        try:
            slides.append(Slide(cast(SlideKind, kind), name))
        except LecturePlanError as error:
            raise LecturePlanError(f"slide {number}: {error}") from None
    return LecturePlan(tuple(slides))


def save_plan(plan: LecturePlan, path: str | Path) -> None:
    Path(path).write_text(plan_to_json(plan), encoding="utf-8")


def load_plan(path: str | Path) -> LecturePlan:
    """The plan in file ``path``; refused in one line that names the file."""
    path = Path(path)
    try:
        with path.open("rb") as file:
            raw = file.read(MAX_FILE_BYTES + 1)
    except OSError as error:
        raise LecturePlanError(f"{path.name}: {error.strerror or 'cannot be read'}") from None
    if len(raw) > MAX_FILE_BYTES:
        raise LecturePlanError(f"{path.name}: too large for a lecture plan (over {MAX_FILE_BYTES} bytes)")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise LecturePlanError(f"{path.name}: not a text file (UTF-8)") from None
    try:
        return plan_from_json(text)
    except LecturePlanError as error:
        raise LecturePlanError(f"{path.name}: {error}") from None
