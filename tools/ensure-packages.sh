#!/usr/bin/env bash
# Installs the Debian packages the integration tests use (PostgreSQL, etcd,
# RabbitMQ), only when missing. Nothing is started or enabled here: the tests
# start their own servers on loopback.
set -euo pipefail

missing=()
ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || missing+=(postgresql)
command -v etcd >/dev/null 2>&1 || missing+=(etcd-server)
command -v rabbitmq-server >/dev/null 2>&1 || missing+=(rabbitmq-server)
command -v wrk >/dev/null 2>&1 || missing+=(wrk)  # make bench

if [ ${#missing[@]} -eq 0 ]; then
    exit 0
fi
if [ "$(id -u)" != 0 ]; then
    echo "ensure-packages: need root to install ${missing[*]}" >&2
    exit 1
fi
echo "Installing Debian packages: ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
