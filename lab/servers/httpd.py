"""Apache as the lab runs it, for the mod_wsgi API (apache.py) and the
socket proxy (socket_proxy.py): Debian's ``apache2`` from a self-contained
config in a private directory, in the foreground, in a process group of
its own; never /etc/apache2. As root its children run as ``www-data``."""

import os
import pathlib
import shutil

MODULES = pathlib.Path("/usr/lib/apache2/modules")
RUN_AS = "www-data"

HEAD = """\
# Written by the ironic-inspector lab: a self-contained Apache config.
ServerRoot {run_dir}
ServerName 127.0.0.1
PidFile {run_dir}/httpd.pid
DefaultRuntimeDir {run_dir}
Mutex file:{run_dir}
{modules}
{user}
ErrorLog {run_dir}/apache-error.log
LogLevel warn
"""


def missing(modules: list[str], package: str) -> str | None:
    """None when ``apache2`` and ``modules`` (file names) are there, else
    what is missing (``package``: the Debian package that has them)."""
    if not shutil.which("apache2") and not pathlib.Path("/usr/sbin/apache2").exists():
        return "apache2 is not installed (Debian package apache2)"
    for module in modules:
        if not (MODULES / module).exists():
            return f"{module} is missing from {MODULES} (Debian package {package})"
    return None


def config_head(run_dir: pathlib.Path, modules: dict[str, str], as_root: bool) -> str:
    """The config's first part: paths in ``run_dir``, the event MPM, access
    control and ``modules`` (name -> file) loaded, the user as root."""
    loaded = {"mpm_event_module": "mod_mpm_event.so"}
    loaded["authz_core_module"] = "mod_authz_core.so"
    loaded.update(modules)
    return HEAD.format(
        run_dir=run_dir,
        modules="\n".join(
            f"LoadModule {name} {MODULES / file}" for name, file in loaded.items()
        ),
        user=f"User {RUN_AS}\nGroup {RUN_AS}" if as_root else "",
    )


def command(config: pathlib.Path) -> list[str]:
    return ["apache2", "-f", str(config), "-DFOREGROUND"]


def environment(**extra: str) -> dict[str, str]:
    """Apache's environment, which its children inherit (as they would
    /etc/apache2/envvars')."""
    return {**os.environ, "LANG": "C.UTF-8", **extra}
