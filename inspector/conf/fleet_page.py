"""Options of the [fleet_page] group: how an operator's browser reaches
the /fleet pages under ``[DEFAULT]auth_strategy = keystone``, which a
browser cannot satisfy (it sends no ``X-Auth-Token``)."""

from oslo_config import cfg

GROUP = "fleet_page"

OPTS = [
    cfg.StrOpt(
        "user_file",
        help="Under auth_strategy = keystone, an htpasswd file (bcrypt "
        "hashes, as [DEFAULT]http_basic_auth_user_file) of the people who "
        "may open the /fleet pages in a browser with HTTP basic "
        "credentials. Such a user may only read (GET and HEAD) the /fleet "
        "pages and the introspection status they link to, and has the "
        "roles of [fleet_page]roles in the API's policy, which is checked "
        "as for a token: it is never more than a Keystone user with those "
        "roles. A request with a token is unaffected. Unset: the pages need "
        "a token, as the API does (a front end that adds one). Ignored "
        "under noauth and http_basic.",
    ),
    cfg.ListOpt(
        "roles",
        default=["reader"],
        help="The roles a user of [fleet_page]user_file has in the policy "
        "checks (introspection:inventory:get and introspection:status "
        "allow reader by default).",
    ),
]


def register_opts(conf: cfg.ConfigOpts) -> None:
    conf.register_opts(OPTS, group=GROUP)


def list_opts() -> list[cfg.Opt]:
    return OPTS
