#!/usr/bin/env bash
# Installs the Debian packages the tests use (PostgreSQL, etcd, Apache with
# mod_wsgi, RabbitMQ, memcached for keystonemiddleware's token cache, lshw
# for the real ironic-python-agent, dnsmasq, busybox's udhcpc and ethtool
# for the PXE filter, Graphviz for the state diagram, podman with runc and
# mmdebstrap for the container images), only when missing.
# Nothing is started or enabled here: the tests
# start their own servers on loopback.
set -euo pipefail

missing=()
ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || missing+=(postgresql)
command -v etcd >/dev/null 2>&1 || missing+=(etcd-server)
[ -x /usr/bin/redis-server ] || missing+=(redis-server)  # the other tooz backend
command -v rabbitmq-server >/dev/null 2>&1 || missing+=(rabbitmq-server)
[ -x /usr/bin/memcached ] || missing+=(memcached)  # keystonemiddleware's token cache
command -v wrk >/dev/null 2>&1 || missing+=(wrk)  # make bench
command -v apache2 >/dev/null 2>&1 || [ -x /usr/sbin/apache2 ] || missing+=(apache2)
[ -e /usr/lib/apache2/modules/mod_wsgi.so ] || missing+=(libapache2-mod-wsgi-py3)
command -v systemd-analyze >/dev/null 2>&1 || missing+=(systemd)  # unit file checks
command -v lshw >/dev/null 2>&1 || missing+=(lshw)  # the real agent's inventory
command -v dot >/dev/null 2>&1 || missing+=(graphviz)  # tools/states_diagram.py
# the PXE filter's tests: a real dnsmasq and DHCP client in network namespaces
[ -x /usr/sbin/dnsmasq ] || missing+=(dnsmasq-base)
command -v busybox >/dev/null 2>&1 || missing+=(busybox)
command -v ethtool >/dev/null 2>&1 || [ -x /usr/sbin/ethtool ] || missing+=(ethtool)
[ -x /usr/sbin/iptables-restore ] || missing+=(iptables)
command -v chromium >/dev/null 2>&1 || missing+=(chromium)  # the /fleet page's browser test
# make image and the container test: podman runs them with runc (crun cannot
# here), mmdebstrap makes their Debian base from Debian's packages
command -v podman >/dev/null 2>&1 || missing+=(podman)
[ -x /usr/sbin/runc ] || missing+=(runc)
command -v mmdebstrap >/dev/null 2>&1 || missing+=(mmdebstrap)
# the Redfish emulator's libvirt test driver (lab/servers/redfish_emulator.py links it in)
[ -e /usr/lib/python3/dist-packages/libvirt.py ] || missing+=(python3-libvirt)

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
