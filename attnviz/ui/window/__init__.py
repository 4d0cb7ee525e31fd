"""The window's composition root: ``MainWindow`` builds the session, the views and the files'
actions; nothing else in ``attnviz.ui`` imports it."""
