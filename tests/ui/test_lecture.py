"""The chapter's lecture given by Page Down alone (issue 37): from the lecture plan's first slide to
its last, in presentation mode, at 1280x720 (a projector) and 1920x1080, in English and then in
Portuguese, with every lesson loaded during presentation mode; at every press the layout probe's
checks, and nothing on a slide scrolled out of sight. tests/ui/lecture_probe.py gives the
lecture, in a child process per screen size (the offscreen platform's screen is fixed per
process)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from attnviz.teaching.lecture import DEFAULT_PLAN
from attnviz.teaching.lessons import LESSONS
from attnviz.teaching.presets import PRESETS

PROBE = Path(__file__).with_name("lecture_probe.py")
ROOT = Path(__file__).resolve().parents[2]


def _lecture(tmp_path: Path, width: int, height: int) -> dict:
    screen = tmp_path / "screen.json"
    geometry = {"name": "S", "x": 0, "y": 0, "width": width, "height": height}
    screen.write_text(json.dumps({"screens": [{**geometry, "logicalDpi": 96, "logicalBaseDpi": 96, "dpr": 1}]}))
    out = tmp_path / "lecture.json"
    env = {
        **os.environ,
        "QT_QPA_PLATFORM": f"offscreen:configfile={screen}",
        "ATTNVIZ_STATE_DIR": str(tmp_path / "state"),
        "PYTHONPATH": str(ROOT),
    }
    shots = tmp_path / "shots"
    shots.mkdir()
    result = subprocess.run(
        [sys.executable, str(PROBE), str(out), str(shots)], env=env, capture_output=True, text=True, timeout=900
    )
    assert result.returncode == 0, result.stderr[-3000:]
    return json.loads(out.read_text())


@pytest.mark.slow
@pytest.mark.parametrize(("width", "height"), [(1280, 720), (1920, 1080)])
def test_the_lecture_is_given_by_page_down_alone_and_every_slide_fits(tmp_path, width, height):
    report = _lecture(tmp_path, width, height)
    # Every problem fails the test: texts of slide size (capitals of 20 px, the probe's
    # small_capitals) included.
    assert report["problems"] == [], "\n".join(report["problems"])
    # What Page Down showed: each example, then its walk from step 1 to its last step (the
    # additive toy's has the hidden features first), the labs, then each lesson's question and
    # then its answer, a page at a time where it is longer than the slide ("answer 2/3"); the
    # same in both languages, but for the answers' pages.
    expected = []
    for slide in DEFAULT_PLAN.slides:
        if slide.kind == "example":
            expected.append(f"example {slide.name}")
        elif slide.kind == "walk":
            steps = ["raw_scores", "scores", "mask", "masked_scores", "weights", "applied_weights", "output"]
            if slide.name == "additive-toy":
                steps.insert(0, "hidden")
            expected += [f"walk {slide.name} step {step}" for step in steps]
        elif slide.kind == "view":
            # Each lab two pages on a slide (the masking lab's six maps three at a time; the
            # scaling lab's softmax plots, then its gradient beside your inputs' numbers).
            expected += [f"view {slide.name} page {page}" for page in (1, 2)]
        else:
            expected += [f"lesson {slide.name} question", f"lesson {slide.name} answer"]
    assert len(expected) == len(PRESETS) + (7 * len(PRESETS) + 1) + 2 * 2 + 2 * len(LESSONS)
    for language in ("en", "pt_BR"):
        shown = report["slides"][language]
        assert _answers_whole(shown) == expected, language


def _answers_whole(slides: list[str]) -> list[str]:
    """The slides with each answer's pages as one slide, after checking that they came in
    order, from the first to the last ("answer 1/3", "answer 2/3", "answer 3/3")."""
    whole: list[str] = []
    pages: list[tuple[int, int]] = []
    for slide in [*slides, ""]:
        head, _, page = slide.rpartition(" ")
        if head.endswith(" answer") and "/" in page:
            number, count = (int(part) for part in page.split("/"))
            pages.append((number, count))
            if number == 1:
                whole.append(head)
            continue
        if pages:
            count = pages[0][1]
            assert pages == [(n, count) for n in range(1, count + 1)], f"{whole[-1]}: pages {pages}"
            pages = []
        if slide:
            whole.append(slide)
    return whole


def test_answers_pages_are_read_whole_and_in_order():
    slides = ["lesson a question", "lesson a answer 1/2", "lesson a answer 2/2", "lesson b answer"]
    assert _answers_whole(slides) == ["lesson a question", "lesson a answer", "lesson b answer"]
    with pytest.raises(AssertionError, match="pages"):
        _answers_whole(["lesson a answer 1/3", "lesson a answer 3/3"])
