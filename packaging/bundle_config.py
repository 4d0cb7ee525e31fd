"""What the PyInstaller bundle leaves out, in one place.

`attnviz.spec` imports this to build the bundle, and tests/test_packaging.py imports it to run
the engine and the app with exactly these modules made unimportable, so a module that the app
starts to need cannot be silently dropped from the bundle (the bundle itself is too slow to
build in CI).  Plain data and one pure function; no PyInstaller import, so the tests need none.
"""

from __future__ import annotations

from fnmatch import fnmatch

__all__ = [
    "EXCLUDED_MODULES",
    "EXCLUDED_FILE_PATTERNS",
    "KEPT_FILE_PATTERNS",
    "is_excluded_file",
    "is_excluded_module",
]

# Python modules and packages left out (a package excludes its submodules too).
EXCLUDED_MODULES: tuple[str, ...] = (
    # GUI toolkits and plotting stacks we do not use; some libraries import them optionally.
    "tkinter",
    "_tkinter",
    "matplotlib",
    "IPython",
    "ipykernel",
    "jupyter_client",
    "PyQt5",
    "PyQt6",
    "PySide2",
    # Unused Qt modules.  Each excluded module also stops PyInstaller's Qt hooks from
    # collecting its shared libraries, plugins and QML files (QtQuick alone is ~40 MB).
    # Kept: QtCore/Gui/Widgets, QtOpenGL(+Widgets), QtSvg(+Widgets), QtTest (pyqtgraph imports
    # them), QtPrintSupport (pyqtgraph's print exporter), QtDBus (the xcb platform plugin links it).
    "PySide6.QtQml",
    "PySide6.QtQuick",
    "PySide6.QtQuickWidgets",
    "PySide6.QtQuickControls2",
    "PySide6.QtQuickTest",
    "PySide6.QtQuick3D",
    "PySide6.QtWebEngineCore",
    "PySide6.QtWebEngineWidgets",
    "PySide6.QtWebEngineQuick",
    "PySide6.QtWebChannel",
    "PySide6.QtWebSockets",
    "PySide6.QtMultimedia",
    "PySide6.QtMultimediaWidgets",
    "PySide6.Qt3DCore",
    "PySide6.Qt3DRender",
    "PySide6.Qt3DInput",
    "PySide6.Qt3DLogic",
    "PySide6.Qt3DAnimation",
    "PySide6.Qt3DExtras",
    "PySide6.QtCharts",
    "PySide6.QtDataVisualization",
    "PySide6.QtGraphs",
    "PySide6.QtPdf",
    "PySide6.QtPdfWidgets",
    "PySide6.QtDesigner",
    "PySide6.QtUiTools",
    "PySide6.QtHelp",
    "PySide6.QtSql",
    "PySide6.QtNetwork",
    "PySide6.QtConcurrent",
    "PySide6.QtXml",
    "PySide6.QtBluetooth",
    "PySide6.QtPositioning",
    "PySide6.QtLocation",
    "PySide6.QtSerialPort",
    "PySide6.QtRemoteObjects",
    "PySide6.QtScxml",
    "PySide6.QtSensors",
    "PySide6.QtTextToSpeech",
    # PyTorch's compiler, export and test machinery.  PyInstaller's torch hook collects every
    # torch submodule (as bytecode *and* source); eager-mode attention never imports these
    # (checked with sys.modules after running every scoring x mask mode and the app), and
    # they reach for sympy, jinja2 and networkx, which then stay out as well.
    # torch.testing._internal itself must stay: torch.utils.checkpoint imports its
    # logging_tensor module while `import torch` runs.  Its big test-suite parts can go.
    "torch._inductor",
    "torch._dynamo",
    "torch.onnx",
    "torch.testing._internal.distributed",
    "torch.testing._internal.opinfo",
    "torch.testing._internal.generated",
    "torch.testing._internal.common_methods_invocations",
    "torch.testing._internal.common_modules",
    "torch.testing._internal.common_nn",
    "torch.utils.tensorboard",
    "torch.utils.benchmark",
    "torch.utils.cpp_extension",
    "torch.utils.bottleneck",
    "torch.distributed.fsdp",
    "torch.distributed.tensor",
    "torch.distributed.pipelining",
    "torch.distributed.checkpoint",
    "torch.distributed.elastic",
    "functorch",
    "sympy",
    "mpmath",
    "networkx",
    "jinja2",
    "fsspec",
    # Development tools that happen to be installed next to the app.
    "pytest",
    "_pytest",
    "hypothesis",
    "pytestqt",
    "setuptools",
    "pip",
    "PyInstaller",
    # attnviz's own benchmarks are a developer tool, not part of the app.
    "attnviz.bench",
)

# Collected files (path inside the bundle, '/'-separated) left out: test programs and
# libraries, C/C++ headers and build tools that ship inside the torch wheel.
EXCLUDED_FILE_PATTERNS: tuple[str, ...] = (
    "torch/test/*",  # C++ test executables (~80 MB)
    "torch/bin/*",  # protoc and C++ tests (torch_shm_manager stays, see KEPT_FILE_PATTERNS)
    "torch/include/*",
    "torch/share/*",  # CMake config for building C++ extensions
    "torch/lib/libjitbackend_test.so",
    "torch/lib/libtorchbind_test.so",
    "torch/lib/libbackend_with_compiler.so",
    "torch/lib/libaoti_custom_ops.so",
    "torch/_inductor/*",
    "torch/_dynamo/*",
    "torch/utils/benchmark/*",
    "resources/screenshots/*",  # for the README, not the app
    "PySide6/Qt/qml/*",
    "PySide6/Qt/translations/*",  # all but KEPT_FILE_PATTERNS
    "PySide6/Qt/plugins/designer/*",
    # The GTK3 platform theme would load the *system's* GTK against the glib, pango and cairo
    # copied from the build machine, a classic source of symbol-version crashes; without it Qt
    # uses its own style and the xdg-desktop-portal theme for native file dialogs.
    "PySide6/Qt/plugins/platformthemes/libqgtk3.so",
    # Embedded-device platforms (framebuffer, EGLFS, VNC, Vulkan display): not a desktop.
    "PySide6/Qt/plugins/egldeviceintegrations/*",
    "PySide6/Qt/plugins/platforms/libqeglfs.so",
    "PySide6/Qt/plugins/platforms/libqminimalegl.so",
    "PySide6/Qt/plugins/platforms/libqlinuxfb.so",
    "PySide6/Qt/plugins/platforms/libqvnc.so",
    "PySide6/Qt/plugins/platforms/libqvkkhrdisplay.so",
    "PySide6/Qt/plugins/qmltooling/*",
    "PySide6/Qt/plugins/qmllint/*",
)

# Exceptions to EXCLUDED_FILE_PATTERNS.
KEPT_FILE_PATTERNS: tuple[str, ...] = (
    # `import torch` itself fails ("Unable to find torch_shm_manager") if this file is missing,
    # although only DataLoader worker processes ever run it.
    "torch/bin/torch_shm_manager",
    # Qt's own translations for standard dialogs (file dialogs, colour picker, ...).  The other
    # catalogues translate Qt Designer, Linguist, Assistant and WebEngine, none of which we ship.
    "PySide6/Qt/translations/qtbase_*.qm",
)


def _norm(path: str) -> str:
    return path.replace("\\", "/")


def is_excluded_file(dest: str) -> bool:
    """True for a collected file (its destination inside the bundle) the bundle leaves out."""
    dest = _norm(dest)
    if any(fnmatch(dest, pattern) for pattern in KEPT_FILE_PATTERNS):
        return False
    return any(fnmatch(dest, pattern) for pattern in EXCLUDED_FILE_PATTERNS)


def is_excluded_module(name: str) -> bool:
    """True for a module that EXCLUDED_MODULES leaves out (the entry itself or a submodule)."""
    return any(name == entry or name.startswith(entry + ".") for entry in EXCLUDED_MODULES)
