"""Ironic's inspection hook that pushes each inspection to the service."""
