"""Teaching content, no Qt: the presets (``presets``) and the guided lessons (``lessons``)."""
