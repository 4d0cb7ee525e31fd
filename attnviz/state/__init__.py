"""The run model, no Qt and no torch: the app's ``State`` and its undoable edits (``document``),
a model's recorded run (``run``: ``ModelRun``, ``AttentionCall``), every setting declared once
(``settings``) over the catalogue of choices (``catalog``)."""
