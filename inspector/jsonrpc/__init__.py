"""The brokerless transport between the API and the conductors
(``[DEFAULT]rpc_transport = json-rpc``): JSON-RPC 2.0 over HTTP(S).

:mod:`~inspector.jsonrpc.protocol` holds the wire format and its limits,
:mod:`~inspector.jsonrpc.server` each conductor's endpoint,
:mod:`~inspector.jsonrpc.client` the API's side, and
:mod:`~inspector.jsonrpc.endpoint` the URL a conductor publishes in the
conductor group. Imports the kernel and :mod:`inspector.net` only.
"""
