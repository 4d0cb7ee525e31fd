"""The settings panels are built from the settings' declarations (attnviz.state.settings), and the
inputs' labels from the catalogue's roles: a declaration changed in a test is what the panels,
the undo texts and the window show."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest
from PySide6.QtWidgets import QCheckBox, QComboBox, QDoubleSpinBox, QSpinBox

from attnviz.state import catalog
from attnviz.state.document import SetBlock, SetSettings
from attnviz.state.settings import SETTINGS, Choice, DeviceName, Flag, Number, Whole, in_group
from attnviz.ui.app.controls import LongMasksPanel, SettingsPanel
from attnviz.ui.app.undo import command_text
from attnviz.ui.i18n import tr_text

from .conftest import wait_current


@pytest.mark.parametrize("panel_type", [SettingsPanel, LongMasksPanel])
def test_each_declared_setting_has_its_widget_range_entries_caption_and_tooltip(qtbot, panel_type) -> None:  # noqa: ANN001
    panel = panel_type()
    qtbot.addWidget(panel)
    declared = in_group(panel_type.group)
    assert declared and list(panel.fields) == [s.name for s in declared]
    for setting in declared:
        field = panel.fields[setting.name]
        assert field.toolTip() == setting.tooltip, setting.name
        if isinstance(setting, Choice):
            assert isinstance(field, QComboBox)
            entries = {field.itemData(i): field.itemText(i) for i in range(field.count())}
            assert entries == {key: tr_text(label) for key, label in setting.choices().items()}
        elif isinstance(setting, DeviceName):
            assert isinstance(field, QComboBox)
        elif isinstance(setting, Whole):
            assert isinstance(field, QSpinBox)
            assert (field.minimum(), field.maximum()) == (setting.low, setting.high)
            assert field.specialValueText() == setting.zero_text
        elif isinstance(setting, Number):
            assert isinstance(field, QDoubleSpinBox)
            assert (field.minimum(), field.maximum(), field.singleStep()) == (setting.low, setting.high, setting.step)
        else:
            assert isinstance(setting, Flag) and isinstance(field, QCheckBox)
            assert field.text() == setting.label
        if not isinstance(setting, Flag):
            assert panel.captions[setting.name].text() == setting.label
            assert panel.captions[setting.name].buddy() is field


def test_a_changed_declaration_is_shown_by_the_panel_and_named_by_the_undo_text(window, qtbot) -> None:  # noqa: ANN001
    before = SETTINGS["window"]
    panel = window.controls.long_masks
    try:
        SETTINGS.register(replace(before, high=50, label="&Narrow window", undo_name="narrow window"))
        spin = panel.spins["window"]
        assert spin.maximum() == 50 and panel.captions["window"].text() == "&Narrow window"
        fresh = LongMasksPanel()
        qtbot.addWidget(fresh)
        assert fresh.spins["window"].maximum() == 50
        spin.setValue(4)
        wait_current(qtbot, window)
        assert window.session.document.state.settings.window == 4
        assert window.session.undo_stack.undoText() == "Change narrow window"
    finally:
        SETTINGS.register(before)
    assert panel.spins["window"].maximum() == before.high
    assert panel.captions["window"].text() == before.label


def test_a_setting_greys_out_where_its_declaration_says_it_changes_nothing(window, qtbot) -> None:  # noqa: ANN001
    panel = window.controls.settings
    assert panel.fields["num_hiddens"].isEnabled()  # additive attention, the default preset
    assert not panel.fields["dropout_seed"].isEnabled()
    window.session.push(SetSettings({"scoring": "scaled_dot", "dropout": 0.5, "train": True}))
    wait_current(qtbot, window)
    assert not panel.fields["num_hiddens"].isEnabled() and not panel.fields["param_seed"].isEnabled()
    assert panel.fields["dropout_seed"].isEnabled()
    assert panel.checks["train"].isChecked() and panel.doubles["dropout"].value() == 0.5


def test_the_inputs_are_labelled_from_the_catalogues_roles(window, qtbot) -> None:  # noqa: ANN001
    tabs = window.inputs.tabs
    assert [tabs.tabText(i) for i in range(tabs.count())] == [info.label for info in catalog.ROLES.values()]
    before = catalog.ROLES["keys"]
    try:
        catalog.ROLES.register(replace(before, word="key vectors"))
        assert command_text(SetBlock("keys", 0, 0, 0, np.zeros((1, 2)))) == "Edit 2 cells of key vectors"
        window.inputs.fillRequested.emit("keys", "zeros", 0)
        wait_current(qtbot, window)
        assert window.session.undo_stack.undoText() == "Fill key vectors with zeros"
    finally:
        catalog.ROLES.register(before)
