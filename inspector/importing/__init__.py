"""Importing a running ironic-inspector 12.x deployment: its nodes and
statuses, lookup attributes, rules and stored introspection data, read
from its database (:mod:`.from_database`) or its API
(:mod:`.from_api`), judged against ours (:mod:`.plan`) and written in
one transaction (:mod:`.write`). ``ironic-inspector-manage import
upstream`` runs it (doc/upgrade.md)."""
