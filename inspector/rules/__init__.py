"""Introspection rules: conditions on the data, actions on the Ironic node."""
