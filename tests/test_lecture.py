"""The lecture plan: the default order, saving and loading a reordered plan, one-line refusals."""

from __future__ import annotations

import json

import pytest

from attnviz.teaching.lecture import (
    DEFAULT_PLAN,
    LecturePlan,
    LecturePlanError,
    Slide,
    load_plan,
    plan_from_json,
    plan_to_json,
    save_plan,
)
from attnviz.teaching.lessons import LESSONS
from attnviz.teaching.presets import PRESETS


def test_the_default_plan_has_each_example_then_its_walk_the_labs_and_every_lesson():
    slides = DEFAULT_PLAN.slides
    assert slides[:2] == (Slide("example", "additive-toy"), Slide("walk", "additive-toy"))
    assert [s.name for s in slides if s.kind == "example"] == list(PRESETS)
    assert [s.name for s in slides if s.kind == "walk"] == list(PRESETS)
    assert [s.name for s in slides if s.kind == "lesson"] == list(LESSONS)
    assert [s.name for s in slides if s.kind == "view"] == ["masking-lab", "scaling-lab"]
    assert Slide("view", "scaling-lab").example is None  # a view shows the example before it


def test_a_reordered_plan_is_saved_and_read_back(tmp_path):
    plan = LecturePlan((*DEFAULT_PLAN.reordered([len(DEFAULT_PLAN) - 1, 0, 3]).slides, Slide("view", "scaling-lab")))
    path = tmp_path / "lecture.json"
    save_plan(plan, path)
    assert json.loads(path.read_text())["slides"][0] == {"lesson": "exercise-3-summation"}
    assert load_plan(path) == plan


def test_the_slide_that_loads_an_example_nearest_to_where_the_lecture_is():
    plan = DEFAULT_PLAN
    assert plan.index_of_example("dot-toy", near=0) == 2  # the example before its walk
    assert plan.index_of_example("dot-toy", near=3) == 3  # the walk itself
    assert plan.index_of_example("pitfall-float-mask") == plan.slides.index(Slide("lesson", "pitfall-float-mask"))
    assert plan.index_of_example(None) is None and plan.index_of_example("a file") is None


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("{", "not JSON"),
        ("[]", "not a lecture plan"),
        ('{"format": "attnviz-lecture", "version": 2, "slides": []}', "version 2"),
        ('{"format": "attnviz-lecture", "version": 1, "slides": {}}', '"slides" must be a list'),
        ('{"format": "attnviz-lecture", "version": 1, "slides": []}', "at least one slide"),
        ('{"format": "attnviz-lecture", "version": 1, "slides": [{"example": "nope"}]}', "slide 1: unknown example"),
        (
            '{"format": "attnviz-lecture", "version": 1, '
            '"slides": [{"lesson": "pitfall-zero-length"}, {"movie": "x"}]}',
            "slide 2: unknown kind of slide 'movie'",
        ),
        ('{"format": "attnviz-lecture", "version": 1, "slides": [{"view": 3}]}', "slide 1: the name of the view"),
        (
            '{"format": "attnviz-lecture", "version": 1, "slides": [{"view": "a", "lesson": "b"}]}',
            "slide 1: must be one",
        ),
    ],
)
def test_a_bad_plan_is_refused_in_one_line(text, words):
    with pytest.raises(LecturePlanError) as caught:
        plan_from_json(text)
    assert words in str(caught.value) and "\n" not in str(caught.value)


def test_a_file_that_is_not_a_plan_is_refused_naming_it(tmp_path):
    path = tmp_path / "notes.json"
    path.write_bytes(b"\xff\xfe binary")
    with pytest.raises(LecturePlanError, match=r"^notes\.json: not a text file"):
        load_plan(path)
    with pytest.raises(LecturePlanError, match=r"^missing\.json: "):
        load_plan(tmp_path / "missing.json")


def test_the_json_round_trip_keeps_every_slide():
    assert plan_from_json(plan_to_json(DEFAULT_PLAN)) == DEFAULT_PLAN
    with pytest.raises(LecturePlanError):
        LecturePlan(())
