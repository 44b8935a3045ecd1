# mod_wsgi loads this file: the API of ironic-inspector (split mode).
from inspector.wsgi import application  # noqa: F401
