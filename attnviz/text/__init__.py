"""Words, the lowest layer: translation marks and messages (``tr``), numbers as typed and pasted
(``numbers``)."""
