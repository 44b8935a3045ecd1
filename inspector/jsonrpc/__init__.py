"""The brokerless transport between the API and the conductors
(``[DEFAULT]rpc_transport = json-rpc``): JSON-RPC 2.0 over HTTP(S).

:mod:`~inspector.jsonrpc.protocol` holds the wire format and its limits,
:mod:`~inspector.jsonrpc.server` each conductor's endpoint,
:mod:`~inspector.jsonrpc.client` the API's side, and
:mod:`~inspector.jsonrpc.endpoint` where a conductor is reached (published
in the conductor group).
"""
