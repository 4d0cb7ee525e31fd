"""Packaging checks cheap enough for CI: metadata files, icons, the spec, the bundle's exclusions.

Building the bundle itself (PyInstaller, ~1.5 min and 600 MB) is left to packaging/build.sh and
packaging/smoke_test.sh.  What can silently rot without a build is checked here: the .desktop
and AppStream files agree with each other and with the icons, the spec is valid Python, the
icons are the drawing make_icon.py makes, and the app still works with every module the
bundle leaves out made unimportable.
"""

from __future__ import annotations

import configparser
import importlib.util
import os
import re
import struct
import subprocess
import sys
import textwrap
import xml.etree.ElementTree as ET
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGING = ROOT / "packaging"
ICONS = ROOT / "resources" / "icons"
DESKTOP = PACKAGING / "attnviz.desktop"
METAINFO = PACKAGING / "io.github.attnviz.attnviz.metainfo.xml"
APP_ID = "io.github.attnviz.attnviz"


def _load(name: str) -> ModuleType:
    """Import a packaging/ script as a module (packaging/ is not a package)."""
    spec = importlib.util.spec_from_file_location(f"_packaging_{name}", PACKAGING / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up while the class is built
    spec.loader.exec_module(module)
    return module


make_icon = _load("make_icon")
bundle_config = _load("bundle_config")


def _desktop_entry() -> configparser.SectionProxy:
    parser = configparser.ConfigParser(interpolation=None, strict=True)
    parser.optionxform = str  # type: ignore[assignment,method-assign]  # keys are case-sensitive
    parser.read_string(DESKTOP.read_text(encoding="utf-8"))
    return parser["Desktop Entry"]


def _metainfo() -> ET.Element:
    return ET.parse(METAINFO).getroot()


def _png_size(path: Path) -> tuple[int, int]:
    data = path.read_bytes()[:24]
    assert data[:8] == b"\x89PNG\r\n\x1a\n", f"{path.name} is not a PNG"
    assert data[12:16] == b"IHDR"
    width, height = struct.unpack(">II", data[16:24])
    return width, height


def _version() -> str:
    text = (ROOT / "attnviz" / "__init__.py").read_text(encoding="utf-8")
    match = re.search(r'^__version__ = "([^"]+)"', text, re.MULTILINE)
    assert match
    return match.group(1)


# -- .desktop ---------------------------------------------------------------------------------


def test_desktop_file_has_the_required_keys() -> None:
    entry = _desktop_entry()
    assert entry["Type"] == "Application"
    assert entry["Name"] == "attnviz"
    assert entry["Exec"].split()[0] == "attnviz"
    assert entry["Icon"] == "attnviz"
    assert entry["Terminal"] == "false"
    categories = entry["Categories"]
    assert categories.endswith(";"), "freedesktop lists end with ';'"
    assert categories.split(";")[:3] == ["Education", "Science", "Development"]
    assert entry["Comment"].strip()


def test_desktop_icon_name_matches_the_icon_files() -> None:
    icon = _desktop_entry()["Icon"]
    assert (ICONS / f"{icon}.svg").is_file()
    for size in make_icon.SIZES:
        assert (ICONS / f"{icon}-{size}.png").is_file()


def test_desktop_exec_is_the_installed_gui_script() -> None:
    # `Exec=attnviz` only works if pip installs a command of that name.
    pyproject = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    gui_scripts = pyproject.split("[project.gui-scripts]", 1)[1].split("\n[", 1)[0]
    assert re.search(r'^attnviz\s*=\s*"attnviz\.cli\.gui:main"', gui_scripts, re.MULTILINE)


# -- AppStream metainfo ---------------------------------------------------------------------------


def test_metainfo_has_the_required_elements() -> None:
    root = _metainfo()
    assert root.tag == "component"
    assert root.get("type") == "desktop-application"
    assert root.findtext("id") == APP_ID
    assert root.findtext("metadata_license") == "CC0-1.0"
    assert root.findtext("project_license") == "MIT"
    assert root.findtext("name") == "attnviz"
    summary = root.findtext("summary") or ""
    # AppStream wants a short summary without a trailing full stop.
    assert 0 < len(summary) <= 80 and not summary.endswith(".")
    description = root.find("description")
    assert description is not None
    paragraphs = [p.text or "" for p in description.iter("p")]
    assert paragraphs and all(p.strip() for p in paragraphs)


def test_metainfo_points_at_the_desktop_file_and_icon() -> None:
    root = _metainfo()
    launchable = root.find("launchable")
    assert launchable is not None and launchable.get("type") == "desktop-id"
    assert launchable.text == DESKTOP.name
    icon = root.find("icon")
    assert icon is not None and icon.get("type") == "stock"
    assert icon.text == _desktop_entry()["Icon"]
    assert root.findtext("provides/binary") == _desktop_entry()["Exec"].split()[0]
    categories = [c.text for c in root.iter("category")]
    assert categories == [c for c in _desktop_entry()["Categories"].split(";") if c]


def test_metainfo_file_name_is_the_component_id() -> None:
    assert METAINFO.name == f"{_metainfo().findtext('id')}.metainfo.xml"


def test_metainfo_lists_the_current_release() -> None:
    releases = _metainfo().findall("releases/release")
    assert releases, "no <release>"
    assert releases[0].get("version") == _version()
    assert re.fullmatch(r"\d{4}-\d{2}-\d{2}", releases[0].get("date") or "")


# -- icons ------------------------------------------------------------------------------------


@pytest.mark.parametrize("size", make_icon.SIZES)
def test_icon_png_has_its_size(size: int) -> None:
    assert _png_size(ICONS / f"attnviz-{size}.png") == (size, size)


def test_icon_sizes_cover_the_freedesktop_range() -> None:
    assert make_icon.SIZES[0] == 16 and make_icon.SIZES[-1] == 512
    assert {16, 24, 32, 48, 64, 128, 256, 512} <= set(make_icon.SIZES)


def test_icon_svg_is_what_make_icon_draws() -> None:
    # Hand edits to the SVG would be lost at the next regeneration; change make_icon.py instead.
    assert (ICONS / "attnviz.svg").read_text(encoding="utf-8") == make_icon.build_svg()
    root = ET.parse(ICONS / "attnviz.svg").getroot()
    assert root.tag == "{http://www.w3.org/2000/svg}svg"
    assert root.get("viewBox") == "0 0 256 256"


def _rgb(path: Path, x: int, y: int) -> tuple[int, int, int]:
    from PySide6.QtGui import QImage

    image = QImage(str(path))
    assert not image.isNull()
    colour = image.pixelColor(x, y)
    return colour.red(), colour.green(), colour.blue()


def _hex(colour: str) -> tuple[int, int, int]:
    return int(colour[1:3], 16), int(colour[3:5], 16), int(colour[5:7], 16)


@pytest.mark.parametrize("size", [16, 24, 32, 512])
def test_icon_png_shows_the_heatmap(size: int) -> None:
    """The PNGs are the rendered drawing, not blank: diagonal yellow, masked column grey."""
    layout = make_icon.SMALL.get(size, make_icon.MASTER)
    scale = size / layout.canvas
    side = layout.pitch - layout.gap

    def centre(row: int, col: int) -> tuple[int, int]:
        # Integer pixel inside the cell, clear of its anti-aliased edges.
        x = layout.origin + col * layout.pitch + side // 2
        y = layout.origin + row * layout.pitch + side // 2
        return int(x * scale), int(y * scale)

    path = ICONS / f"attnviz-{size}.png"
    yellow = _hex(make_icon.CIVIDIS[1.0])
    for i in range(3):
        assert _rgb(path, *centre(i, i)) == yellow
    assert _rgb(path, *centre(0, 2)) == _hex(make_icon.CIVIDIS[0.1])
    # Every pixel of the masked column is the mask grey or the hatch grey (pixel-exact only for
    # the snapped small sizes; big ones have anti-aliased stripe edges in between).
    if layout.pixel_hatch:
        x0 = layout.origin + 3 * layout.pitch
        seen = {
            _rgb(path, x, y)
            for x in range(x0, x0 + side)
            for y in range(layout.origin, layout.origin + 4 * layout.pitch)
        }
        assert seen == {_hex(make_icon.MASK), _hex(make_icon.HATCH)}
    # The corner pixel is (nearly: anti-aliasing of the 3 px radius at 16 px leaves alpha 7)
    # transparent, because the background is a rounded square; the centre is opaque.
    from PySide6.QtGui import QImage

    image = QImage(str(path))
    assert image.pixelColor(0, 0).alpha() < 16
    assert image.pixelColor(size // 2, size // 2).alpha() == 255


# -- bundle definition ----------------------------------------------------------------------------


def test_spec_compiles_as_python() -> None:
    source = (PACKAGING / "attnviz.spec").read_text(encoding="utf-8")
    compile(source, str(PACKAGING / "attnviz.spec"), "exec")
    # It must build the onedir bundle the scripts expect, from the entry script that exists.
    assert 'name="attnviz"' in source and "COLLECT(" in source
    assert (PACKAGING / "attnviz_entry.py").is_file()
    compile((PACKAGING / "attnviz_entry.py").read_text(encoding="utf-8"), "entry", "exec")


@pytest.mark.parametrize("script", ["build.sh", "smoke_test.sh"])
def test_shell_scripts_are_executable_bash(script: str) -> None:
    path = PACKAGING / script
    assert os.access(path, os.X_OK), f"{script} is not executable"
    result = subprocess.run(["bash", "-n", str(path)], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr


def test_build_outputs_are_git_ignored() -> None:
    ignored = (ROOT / ".gitignore").read_text(encoding="utf-8").split()
    assert "build/" in ignored and "dist/" in ignored


@pytest.mark.parametrize(
    ("dest", "excluded"),
    [
        ("torch/test/test_api", True),
        ("torch/include/ATen/ATen.h", True),
        ("torch/bin/test_api", True),
        ("torch/bin/torch_shm_manager", False),  # `import torch` checks that it exists
        ("torch/lib/libtorchbind_test.so", True),
        ("torch/lib/libtorch_cpu.so", False),
        ("PySide6/Qt/translations/qtbase_de.qm", False),
        ("PySide6/Qt/translations/designer_de.qm", True),
        ("PySide6/Qt/plugins/platforms/libqxcb.so", False),
        ("PySide6/Qt/plugins/platforms/libqwayland.so", False),
        ("PySide6/Qt/plugins/platforms/libqoffscreen.so", False),
        ("PySide6/Qt/plugins/platforms/libqvnc.so", True),
        ("PySide6/Qt/plugins/platformthemes/libqgtk3.so", True),
        ("PySide6\\Qt\\qml\\QtQuick\\qmldir", True),  # Windows separators
        ("resources/icons/attnviz-256.png", False),
        ("resources/screenshots/attnviz.png", True),
        ("attnviz/py.typed", False),
    ],
)
def test_bundle_file_exclusions(dest: str, excluded: bool) -> None:
    assert bundle_config.is_excluded_file(dest) is excluded


@pytest.mark.parametrize(
    ("module", "excluded"),
    [
        ("torch", False),
        ("torch.nn.functional", False),
        ("torch._inductor", True),
        ("torch._inductor.config", True),
        ("torch._inductor_like", False),  # a prefix of the name is not a parent package
        ("torch.testing._internal.logging_tensor", False),  # `import torch` needs it
        ("torch.testing._internal.opinfo.core", True),
        ("PySide6.QtWidgets", False),
        ("PySide6.QtQuick", True),
        ("attnviz.bench.engine_bench", True),
        ("attnviz.engine", False),
    ],
)
def test_bundle_module_exclusions(module: str, excluded: bool) -> None:
    assert bundle_config.is_excluded_module(module) is excluded


# The app, run with every module the bundle leaves out made unimportable.  Catches a new
# `import sympy` (or similar) in a code path before it becomes an ImportError in the bundle.
_WITHOUT_EXCLUDED = textwrap.dedent(
    """
    import importlib, importlib.abc, importlib.util, os, pkgutil, sys
    spec = importlib.util.spec_from_file_location("bundle_config", sys.argv[1])
    bundle_config = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bundle_config)
    attempts = set()

    class Excluded(importlib.abc.MetaPathFinder):
        def find_spec(self, name, path, target=None):
            if bundle_config.is_excluded_module(name):
                attempts.add(name)
                raise ModuleNotFoundError(f"left out of the bundle: {name}", name=name)
            return None

    sys.meta_path.insert(0, Excluded())
    import attnviz
    # Every module of the app (not its benchmarks; not __main__, which would run the app) imports.
    modules = [m.name for m in pkgutil.walk_packages(attnviz.__path__, "attnviz.")
               if not bundle_config.is_excluded_module(m.name)
               and not m.name.endswith("__main__")]
    for name in modules:
        importlib.import_module(name)
    import torch
    from attnviz.engine import MASK_MODES, SCORINGS, attend
    from attnviz.compute.attention import run_state
    from attnviz.teaching.presets import PRESETS
    g = torch.Generator().manual_seed(0)
    q, k, v = (torch.randn(2, 3, 4, generator=g), torch.randn(2, 5, 4, generator=g),
               torch.randn(2, 5, 6, generator=g))
    runs = 0
    for scoring in SCORINGS:
        for mode in MASK_MODES:
            for causal in (None, "top_left", "bottom_right"):
                attend(q, k, v, torch.tensor([2, 5]), scoring=scoring, mask_mode=mode,
                       causal=causal, dropout=0.1, train=True)
                runs += 1
    for preset in PRESETS.values():
        outcome = run_state(preset.build(), 0)
        assert outcome.error is None, (preset.name, outcome.error)
    from PySide6.QtWidgets import QApplication
    app = QApplication([])
    from attnviz.ui.window.main_window import MainWindow
    window = MainWindow(next(iter(PRESETS)))
    window.show()
    app.processEvents()
    print("modules", len(modules), "runs", runs, "presets", len(PRESETS))
    print("refused", ",".join(sorted(attempts)))
    sys.stdout.flush()
    os._exit(0)  # skip Qt/worker teardown; only what ran above matters
    """
)


def test_app_works_without_the_modules_the_bundle_leaves_out() -> None:
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen", "PYTHONPATH": str(ROOT)}
    result = subprocess.run(
        [sys.executable, "-c", _WITHOUT_EXCLUDED, str(PACKAGING / "bundle_config.py")],
        capture_output=True,
        text=True,
        env=env,
        cwd=ROOT,
        timeout=600,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    counts = re.search(r"modules (\d+) runs (\d+) presets (\d+)", result.stdout)
    assert counts, result.stdout
    assert int(counts.group(1)) >= 10  # the walk really found the app's modules
    assert int(counts.group(2)) >= 6 * 6 * 3
    assert int(counts.group(3)) >= 4


def test_the_wheel_carries_resources_and_the_session_format(tmp_path):
    """`pip install .` must bring the icons (and later translations) along: resources/ lives
    outside the package in the repository and is mapped to attnviz/_resources."""
    import subprocess
    import sys
    import zipfile

    root = Path(__file__).resolve().parents[1]
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "-q",
            "--no-deps",
            "--no-build-isolation",
            "-w",
            str(tmp_path),
            str(root),
        ],
        check=True,
        capture_output=True,
    )
    (wheel,) = tmp_path.glob("attnviz-*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    assert "attnviz/_resources/icons/attnviz-256.png" in names
    assert "attnviz/io/SESSION_FORMAT.md" in names and "attnviz/io/FILE_FORMATS.md" in names
    assert "attnviz/engine/core.py" in names


def test_resource_dir_is_found_from_a_checkout():
    from attnviz.ui.resources import resource

    assert resource("icons", "attnviz-64.png") is not None
    assert resource("icons", "no-such-file.png") is None
