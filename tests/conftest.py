"""Test-wide set-up: OS threads for oslo.service before anything imports it."""

from inspector import bootstrap

# oslo.messaging imports oslo.service, which falls back to eventlet unless a
# backend was chosen first; every entry point does this, so do the tests.
bootstrap.select_threading_backend()
