# mod_wsgi loads this file: the API of ironic-inspector (split mode).
# preload() builds the service when the daemon process starts, so a missing
# config file or a bad option shows up at once in Apache's error log.
from inspector.wsgi import application, preload  # noqa: F401

preload()
