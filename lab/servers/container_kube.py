"""containers/kube/inspector.yaml played by ``podman kube play`` on this
host: the manifest rendered to the lab's services (its ConfigMap's options,
its Secret's URLs), the Secret made a podman secret, everything removed by
name at the end."""

import base64
import configparser
import io
import json
import pathlib
import subprocess
from typing import Any

import yaml

from lab.checkout import ROOT
from lab.servers.container import podman_command, podman_env

MANIFEST = ROOT / "containers" / "kube" / "inspector.yaml"
SECRET = ROOT / "containers" / "kube" / "secret.yaml"
CONFIG_KEY = "inspector.conf"


class KubePlay:
    """The manifest's objects in ``work_dir``, rendered, and the podman
    commands that play and remove them.

    ``options``: values set in the ConfigMap's ``inspector.conf``;
    ``secrets``: the Secret's values by key; ``api_port``: the API's
    port (the configuration's and the probe's); ``leave_out``: container
    names dropped from the pods (dnsmasq, whose image is not built here).
    """

    def __init__(
        self,
        work_dir: pathlib.Path,
        options: dict[str, dict[str, str]],
        secrets: dict[str, str],
        api_port: int,
        leave_out: tuple[str, ...] = (),
    ) -> None:
        self.work_dir = work_dir
        self.env = podman_env()
        self.documents = list(yaml.safe_load_all(MANIFEST.read_text()))
        self.secret = yaml.safe_load(SECRET.read_text())
        unknown = set(secrets) - set(self.secret["stringData"])
        assert not unknown, f"not keys of {SECRET.name}: {unknown}"
        self.secrets = secrets
        self.options = options
        self.api_port = api_port
        self.leave_out = leave_out
        self.manifest = work_dir / "inspector.yaml"
        self.secret_file = work_dir / "secret.json"

    @property
    def secret_name(self) -> str:
        return str(self.secret["metadata"]["name"])

    def config_maps(self) -> list[str]:
        """The ConfigMaps' names: podman keeps each as a volume."""
        return [
            d["metadata"]["name"] for d in self.documents if d["kind"] == "ConfigMap"
        ]

    def pods(self) -> dict[str, list[str]]:
        """The pods podman makes (``DEPLOYMENT-pod-N``) and their containers."""
        found = {}
        for doc in self._rendered():
            if doc["kind"] != "Deployment":
                continue
            names = [c["name"] for c in doc["spec"]["template"]["spec"]["containers"]]
            for index in range(doc["spec"].get("replicas", 1)):
                found[f"{doc['metadata']['name']}-pod-{index}"] = names
        return found

    @staticmethod
    def container(pod: str, name: str) -> str:
        """The name podman gives a pod's container."""
        return f"{pod}-{name}"

    def _rendered(self) -> list[dict[str, Any]]:
        documents = json.loads(json.dumps(self.documents))  # a deep copy
        for doc in documents:
            if doc["kind"] == "ConfigMap" and CONFIG_KEY in doc["data"]:
                doc["data"][CONFIG_KEY] = self._config(doc["data"][CONFIG_KEY])
            if doc["kind"] != "Deployment":
                continue
            spec = doc["spec"]["template"]["spec"]
            spec["containers"] = [
                c for c in spec["containers"] if c["name"] not in self.leave_out
            ]
            mounted = {
                m["name"] for c in spec["containers"] for m in c.get("volumeMounts", [])
            }
            spec["volumes"] = [
                v for v in spec.get("volumes", []) if v["name"] in mounted
            ]
            for container in spec["containers"]:
                for port in container.get("ports", []):
                    port["containerPort"] = self.api_port
                probe = container.get("readinessProbe", {}).get("httpGet")
                if probe:
                    probe["port"] = self.api_port
        return documents

    def _config(self, text: str) -> str:
        parser = configparser.RawConfigParser(strict=False)
        parser.optionxform = str  # type: ignore[assignment,method-assign]
        parser.read_string(text)
        for group, values in self.options.items():
            if group != "DEFAULT" and not parser.has_section(group):
                parser.add_section(group)
            for key, value in values.items():
                parser.set(group, key, value)
        out = io.StringIO()
        parser.write(out)
        return out.getvalue()

    def render(self) -> None:
        """Writes the manifest and the podman secret's file: the Secret's
        data map as JSON, each value base64-encoded."""
        self.work_dir.mkdir(parents=True, exist_ok=True)
        self.manifest.write_text(yaml.safe_dump_all(self._rendered(), sort_keys=False))
        data = {
            key: base64.b64encode(self.secrets.get(key, value).encode()).decode()
            for key, value in self.secret["stringData"].items()
        }
        self.secret_file.write_text(json.dumps(data))
        self.secret_file.chmod(0o600)

    def podman(
        self, *args: str, timeout: float = 60
    ) -> "subprocess.CompletedProcess[str]":
        return subprocess.run(
            podman_command(*args),
            env=self.env,
            capture_output=True,
            text=True,
            timeout=timeout,
        )

    def play(self, timeout: float = 300) -> None:
        """Removes what a former run left, then makes the secret and plays
        the manifest."""
        self.down()
        made = self.podman("secret", "create", self.secret_name, str(self.secret_file))
        assert made.returncode == 0, made.stderr
        played = self.podman("kube", "play", str(self.manifest), timeout=timeout)
        assert played.returncode == 0, played.stdout + played.stderr

    def logs(self, container: str) -> str:
        """The container's output so far (stdout and stderr)."""
        done = self.podman("logs", container)
        return done.stdout + done.stderr

    def save_logs(self) -> None:
        """Every container's log into the work directory, for a failure's
        reader (the pods go at the end)."""
        for pod, names in self.pods().items():
            for name in names:
                container = self.container(pod, name)
                (self.work_dir / f"{container}.log").write_text(self.logs(container))

    def down(self) -> None:
        """``podman kube down``, then the secret and the ConfigMaps'
        volumes, each by name (none of it need exist)."""
        if self.manifest.exists():
            self.podman("kube", "down", str(self.manifest), timeout=180)
        for pod in self.pods():
            self.podman("pod", "rm", "--force", "--ignore", pod, timeout=180)
        self.podman("secret", "rm", self.secret_name)
        for name in self.config_maps():
            self.podman("volume", "rm", "--force", name)
