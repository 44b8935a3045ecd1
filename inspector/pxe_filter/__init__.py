"""The PXE filter: which machines the inspection DHCP server answers.

:mod:`~inspector.pxe_filter.policy` decides (pure), the backends apply
(:mod:`~inspector.pxe_filter.dnsmasq`, ``hostsfile``, ``iptables``, each a
:class:`~inspector.pxe_filter.backend.FilterBackend`),
:mod:`~inspector.pxe_filter.service`
keeps them in step with the database and Ironic.
"""
