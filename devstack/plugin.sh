#!/bin/bash
# devstack plugin of ironic-inspector-ng: install, configure, register and
# run the introspection service, standalone or split (API under Apache plus
# conductors). devstack sources this file with the phase as arguments.
# shellcheck disable=SC2154  # DEST, SERVICE_HOST, ... come from devstack

_XTRACE_INSPECTOR=$(set +o | grep xtrace)
set +o xtrace

function inspector_install {
    setup_develop "$INSPECTOR_DIR"
    if [[ "$INSPECTOR_SHAPE" == "split" ]]; then
        install_apache_wsgi
    fi
}

function _inspector_split {
    [[ "$INSPECTOR_SHAPE" == "split" ]]
}

function inspector_configure {
    if [[ "$INSPECTOR_SHAPE" != "standalone" && "$INSPECTOR_SHAPE" != "split" ]]; then
        die $LINENO "INSPECTOR_SHAPE must be standalone or split, not '$INSPECTOR_SHAPE'"
    fi
    if [[ "$INSPECTOR_RPC_TRANSPORT" != "oslo" && "$INSPECTOR_RPC_TRANSPORT" != "json-rpc" ]]; then
        die $LINENO "INSPECTOR_RPC_TRANSPORT must be oslo or json-rpc, not '$INSPECTOR_RPC_TRANSPORT'"
    fi
    sudo install -d -o "$INSPECTOR_USER" "$INSPECTOR_CONF_DIR"
    rm -f "$INSPECTOR_CONF_FILE"
    recreate_database ironic_inspector
    iniset "$INSPECTOR_CONF_FILE" database connection "$(database_connection_url ironic_inspector)"
    iniset "$INSPECTOR_CONF_FILE" DEFAULT debug "$ENABLE_DEBUG_LOG_LEVEL"
    iniset "$INSPECTOR_CONF_FILE" DEFAULT auth_strategy keystone
    configure_keystone_authtoken_middleware "$INSPECTOR_CONF_FILE" ironic-inspector
    iniset "$INSPECTOR_CONF_FILE" ironic auth_type password
    iniset "$INSPECTOR_CONF_FILE" ironic auth_url "$KEYSTONE_SERVICE_URI"
    iniset "$INSPECTOR_CONF_FILE" ironic username ironic-inspector
    iniset "$INSPECTOR_CONF_FILE" ironic password "$SERVICE_PASSWORD"
    iniset "$INSPECTOR_CONF_FILE" ironic project_name "$SERVICE_PROJECT_NAME"
    iniset "$INSPECTOR_CONF_FILE" ironic user_domain_name Default
    iniset "$INSPECTOR_CONF_FILE" ironic project_domain_name Default
    iniset "$INSPECTOR_CONF_FILE" ironic region_name "$REGION_NAME"
    # devstack's Ironic runs its own DHCP; filter only when asked to
    iniset "$INSPECTOR_CONF_FILE" pxe_filter driver "$INSPECTOR_PXE_FILTER"
    if [[ "$INSPECTOR_PXE_FILTER" == "dnsmasq" ]]; then
        sudo install -d -o "$INSPECTOR_USER" "$INSPECTOR_DHCP_HOSTSDIR"
        iniset "$INSPECTOR_CONF_FILE" dnsmasq_pxe_filter dhcp_hostsdir "$INSPECTOR_DHCP_HOSTSDIR"
    elif [[ "$INSPECTOR_PXE_FILTER" == "iptables" ]]; then
        iniset "$INSPECTOR_CONF_FILE" iptables dnsmasq_interface "$INSPECTOR_DHCP_INTERFACE"
    fi
    if _inspector_split; then
        iniset "$INSPECTOR_CONF_FILE" DEFAULT standalone False
        iniset "$INSPECTOR_CONF_FILE" DEFAULT rpc_transport "$INSPECTOR_RPC_TRANSPORT"
        if [[ "$INSPECTOR_RPC_TRANSPORT" == "json-rpc" ]]; then
            _inspector_json_rpc_client
        else
            iniset "$INSPECTOR_CONF_FILE" DEFAULT transport_url "$(get_transport_url)"
        fi
        iniset "$INSPECTOR_CONF_FILE" coordination backend_url "$INSPECTOR_COORDINATION_URL"
        local i
        for ((i = 1; i <= INSPECTOR_CONDUCTORS; i++)); do
            iniset "$INSPECTOR_CONF_DIR/conductor-$i.conf" DEFAULT host "$(hostname)-$i"
            if [[ "$INSPECTOR_RPC_TRANSPORT" == "json-rpc" ]]; then
                iniset "$INSPECTOR_CONF_DIR/conductor-$i.conf" json_rpc host_ip "$INSPECTOR_HOST"
                iniset "$INSPECTOR_CONF_DIR/conductor-$i.conf" json_rpc port "$((INSPECTOR_JSON_RPC_PORT + i - 1))"
            fi
        done
    else
        iniset "$INSPECTOR_CONF_FILE" DEFAULT standalone True
        iniset "$INSPECTOR_CONF_FILE" DEFAULT listen_address "$INSPECTOR_HOST"
        iniset "$INSPECTOR_CONF_FILE" DEFAULT listen_port "$INSPECTOR_PORT"
    fi
    "$INSPECTOR_BIN_DIR/ironic-inspector-dbsync" --config-file "$INSPECTOR_CONF_FILE" upgrade
}

# The API calls the conductors with a Keystone token of the service user;
# the conductors check it with [keystone_authtoken] and require admin.
function _inspector_json_rpc_client {
    iniset "$INSPECTOR_CONF_FILE" json_rpc auth_strategy keystone
    iniset "$INSPECTOR_CONF_FILE" json_rpc auth_type password
    iniset "$INSPECTOR_CONF_FILE" json_rpc auth_url "$KEYSTONE_SERVICE_URI"
    iniset "$INSPECTOR_CONF_FILE" json_rpc username ironic-inspector
    iniset "$INSPECTOR_CONF_FILE" json_rpc password "$SERVICE_PASSWORD"
    iniset "$INSPECTOR_CONF_FILE" json_rpc project_name "$SERVICE_PROJECT_NAME"
    iniset "$INSPECTOR_CONF_FILE" json_rpc user_domain_name Default
    iniset "$INSPECTOR_CONF_FILE" json_rpc project_domain_name Default
}

function inspector_register {
    if ! is_service_enabled keystone; then
        return
    fi
    create_service_user ironic-inspector admin
    get_or_create_service ironic-inspector baremetal-introspection "Bare metal introspection"
    get_or_create_endpoint baremetal-introspection "$REGION_NAME" "$INSPECTOR_URL"
}

function _inspector_write_vhost {
    local site
    site=$(apache_site_config_for ironic-inspector-api)
    sudo install -d "$INSPECTOR_WSGI_DIR"
    sudo install -m 0644 "$INSPECTOR_DIR/etc/apache2/inspector-api.wsgi" "$INSPECTOR_WSGI_DIR/"
    sed -e "s|Listen 5050|Listen $INSPECTOR_PORT|" \
        -e "s|<VirtualHost \*:5050>|<VirtualHost *:$INSPECTOR_PORT>|" \
        -e "s|user=ironic-inspector group=ironic-inspector|user=$INSPECTOR_USER|" \
        -e "s|python-home=/opt/ironic-inspector|python-home=$(dirname "$INSPECTOR_BIN_DIR")|" \
        -e "s|/usr/local/share/ironic-inspector|$INSPECTOR_WSGI_DIR|g" \
        "$INSPECTOR_DIR/etc/apache2/ironic-inspector-api.conf" | sudo tee "$site" >/dev/null
}

function inspector_start {
    if _inspector_split; then
        local i
        for ((i = 1; i <= INSPECTOR_CONDUCTORS; i++)); do
            run_process "ironic-inspector-conductor-$i" "$INSPECTOR_BIN_DIR/ironic-inspector-conductor --config-file $INSPECTOR_CONF_FILE --config-file $INSPECTOR_CONF_DIR/conductor-$i.conf"
        done
        if [[ "$INSPECTOR_PXE_FILTER" != "noop" ]]; then
            run_process ironic-inspector-pxe-filter "$INSPECTOR_BIN_DIR/ironic-inspector-pxe-filter --config-file $INSPECTOR_CONF_FILE"
        fi
        _inspector_write_vhost
        enable_apache_site ironic-inspector-api
        restart_apache_server
    else
        run_process ironic-inspector "$INSPECTOR_BIN_DIR/ironic-inspector --config-file $INSPECTOR_CONF_FILE"
    fi
    if ! wait_for_service "$INSPECTOR_TIMEOUT" "$INSPECTOR_URL"; then
        die $LINENO "ironic-inspector did not answer at $INSPECTOR_URL within $INSPECTOR_TIMEOUT s"
    fi
}

function inspector_stop {
    if _inspector_split; then
        local i
        for ((i = 1; i <= INSPECTOR_CONDUCTORS; i++)); do
            stop_process "ironic-inspector-conductor-$i"
        done
        if [[ "$INSPECTOR_PXE_FILTER" != "noop" ]]; then
            stop_process ironic-inspector-pxe-filter
        fi
        disable_apache_site ironic-inspector-api
        restart_apache_server
    else
        stop_process ironic-inspector
    fi
}

function inspector_cleanup {
    sudo rm -rf "$INSPECTOR_CONF_DIR" "$INSPECTOR_WSGI_DIR"
    sudo rm -f "$(apache_site_config_for ironic-inspector-api)"
}

if is_service_enabled ironic-inspector; then
    if [[ "$1" == "stack" && "$2" == "install" ]]; then
        echo_summary "Installing ironic-inspector"
        inspector_install
    elif [[ "$1" == "stack" && "$2" == "post-config" ]]; then
        echo_summary "Configuring ironic-inspector ($INSPECTOR_SHAPE, casts: $INSPECTOR_RPC_TRANSPORT)"
        inspector_configure
        inspector_register
    elif [[ "$1" == "stack" && "$2" == "extra" ]]; then
        echo_summary "Starting ironic-inspector"
        inspector_start
    fi
    if [[ "$1" == "unstack" ]]; then
        inspector_stop
    fi
    if [[ "$1" == "clean" ]]; then
        inspector_cleanup
    fi
fi

$_XTRACE_INSPECTOR
