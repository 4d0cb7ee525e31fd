#!/usr/bin/env bash
# Build the self-contained attnviz bundle into dist/attnviz/ (one folder, run dist/attnviz/attnviz).
#
#   pip install -c constraints.txt -e ".[packaging]"   # once: attnviz + PyInstaller
#   packaging/build.sh
#
# PYTHON picks the interpreter (default: python3 on PATH, i.e. the active virtual environment).
set -euo pipefail
cd "$(dirname "$0")/.."
python="${PYTHON:-python3}"

if ! "$python" -c "import PyInstaller" 2>/dev/null; then
    echo "build.sh: PyInstaller is not installed for $python." >&2
    echo "          Install it with: $python -m pip install -e '.[packaging]'" >&2
    exit 1
fi
if ! "$python" -c "import attnviz, torch, PySide6, pyqtgraph, superqt" 2>/dev/null; then
    echo "build.sh: attnviz or one of its dependencies is not importable by $python." >&2
    echo "          Install it with: $python -m pip install -c constraints.txt -e '.[packaging]'" >&2
    exit 1
fi

start=$(date +%s)
"$python" -m PyInstaller --noconfirm --clean --log-level WARN \
    --distpath dist --workpath build/pyinstaller packaging/attnviz.spec

# libtorch_cpu.so ships with its symbol table (~90 MB); the dynamic symbols that loading needs
# stay.  Only torch's own libraries: stripping auditwheel-patched ones (numpy's OpenBLAS) breaks
# them, which is why the spec does not strip everything.
if command -v strip >/dev/null; then
    for lib in dist/attnviz/_internal/torch/lib/libtorch_cpu.so dist/attnviz/_internal/torch/lib/libtorch_python.so; do
        [ -f "$lib" ] && strip --strip-unneeded "$lib"
    done
else
    echo "build.sh: no strip tool; the bundle is ~90 MB bigger than it needs to be" >&2
fi
end=$(date +%s)

echo "built dist/attnviz/attnviz in $((end - start)) s; size: $(du -sh dist/attnviz | cut -f1)"
echo "check it with: packaging/smoke_test.sh"
