"""What every server of the service stands on: the threaded HTTP server
(:mod:`~inspector.net.wsgi_server`), its TLS (:mod:`~inspector.net.tls`),
Unix socket (:mod:`~inspector.net.listen`) and htpasswd users
(:mod:`~inspector.net.htpasswd`), host addresses
(:mod:`~inspector.net.address`) and the mDNS publisher
(:mod:`~inspector.net.mdns`). Imports only the kernel.
"""
