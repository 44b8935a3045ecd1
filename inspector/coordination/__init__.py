"""Split-mode coordination through tooz: the conductor group and its view."""
