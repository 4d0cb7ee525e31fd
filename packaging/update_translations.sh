#!/usr/bin/env bash
# Refresh the Portuguese catalogue from the sources, then compile it (Qt's own tools, shipped
# with PySide6-Essentials). Translate new entries in Qt Linguist (pyside6-linguist) or by hand,
# then run this again to compile. The tests fail while an entry is missing or unfinished.
set -euo pipefail
cd "$(dirname "$0")/.."
pyside6-lupdate -extensions py -locations none -no-obsolete attnviz -ts resources/translations/attnviz_pt_BR.ts
pyside6-lrelease resources/translations/attnviz_pt_BR.ts -qm resources/translations/attnviz_pt_BR.qm
