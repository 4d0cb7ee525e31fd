"""Qt's own texts that Qt's Portuguese catalogue (qtbase_pt_BR) lacks, translated in ours.

Qt 6.11 changed a few labels of its file dialog ("Look in:" became "&Look in:") and its
Portuguese catalogue still has only the old texts, so the dialog showed two English labels in
an otherwise Portuguese window. Our catalogue is asked before Qt's: marking the texts here puts
them in it (``pyside6-lupdate`` finds them), under Qt's own context. Nothing imports this module;
its only reader is lupdate.
"""

from attnviz.text.tr import QT_TRANSLATE_NOOP

QT_STRINGS = (
    QT_TRANSLATE_NOOP("QFileDialog", "&Look in:"),
    QT_TRANSLATE_NOOP("QFileDialog", "Files of &type:"),
)
