"""The front ends: the ``attnviz`` command and its subcommands (render, doctor, diff, check, code,
bench), what they read (``command_inputs``), ``attnviz.show`` (``viewer``) and
``attnviz.save_session`` (``sessions``), the display check before Qt (``display``)."""
