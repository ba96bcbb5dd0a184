"""TLS for SSL and SASL_SSL listeners (Kafka's SslFactory): a gevent ``SSLContext`` from the ``ssl.*`` keys, each
overridable per listener as ``listener.name.<listener>.ssl.…``, and the principal of a client certificate.

Keystores are PEM (KIP-651's ``ssl.keystore.type=PEM``): ``ssl.keystore.location`` is a file holding the
certificate chain and the private key (encrypted with ``ssl.key.password``, or not: read with a warning, as Kafka
refuses it), or the chain and the key are given inline as ``ssl.keystore.certificate.chain`` /
``ssl.keystore.key``. The truststore is a PEM bundle
(``ssl.truststore.location``, or inline ``ssl.truststore.certificates``). ``ssl.cipher.suites`` takes OpenSSL's
cipher names. As Kafka's ``DefaultSslEngineFactory``, a store is given one way only (a file or inline) and a PEM
store takes no store password (``ssl.key.password`` decrypts the key).
"""

from __future__ import annotations

import logging
import os
import ssl
import tempfile
from collections.abc import Callable
from typing import Any

from gevent.ssl import SSLContext

from zkafka.config import choice_key, csv_key, str_key
from zkafka.errors import InvalidConfigError

log = logging.getLogger(__name__)

ANONYMOUS = "User:ANONYMOUS"
PEM = "PEM"

SSL_KEYS = (
    str_key("ssl.keystore.type", PEM),
    str_key("ssl.keystore.location"),
    str_key("ssl.keystore.password"),
    str_key("ssl.key.password"),
    str_key("ssl.keystore.certificate.chain"),
    str_key("ssl.keystore.key"),
    str_key("ssl.truststore.type", PEM),
    str_key("ssl.truststore.location"),
    str_key("ssl.truststore.password"),
    str_key("ssl.truststore.certificates"),
    choice_key("ssl.client.auth", "none", ("required", "requested", "none")),
    csv_key("ssl.enabled.protocols", ["TLSv1.2", "TLSv1.3"]),
    csv_key("ssl.cipher.suites", []),
    str_key("ssl.protocol", "TLSv1.3"),
    str_key("ssl.endpoint.identification.algorithm", "https"),
)
_TLS_VERSIONS = {
    "TLSv1": ssl.TLSVersion.TLSv1,
    "TLSv1.1": ssl.TLSVersion.TLSv1_1,
    "TLSv1.2": ssl.TLSVersion.TLSv1_2,
    "TLSv1.3": ssl.TLSVersion.TLSv1_3,
}
_CLIENT_AUTH = {"required": ssl.CERT_REQUIRED, "requested": ssl.CERT_OPTIONAL, "none": ssl.CERT_NONE}
# RFC 2253 attribute names for the subject fields Python's getpeercert reports.
_RDN_NAMES = {
    "commonName": "CN",
    "organizationName": "O",
    "organizationalUnitName": "OU",
    "countryName": "C",
    "stateOrProvinceName": "ST",
    "localityName": "L",
    "streetAddress": "STREET",
    "domainComponent": "DC",
    "userId": "UID",
}


def listener_setting(config: Any, listener: str, key: str) -> Any:
    """``listener.name.<listener>.<key>`` when set, else ``key``."""
    raw = config.raw.get(f"listener.name.{listener.lower()}.{key}")
    if raw is None:
        return config[key]
    return config.keys[key].parse(key, raw) if key in config.keys else raw


def server_context(config: Any, listener: str) -> SSLContext:
    """The TLS context of an SSL or SASL_SSL listener; InvalidConfigError naming the key when it cannot be made."""
    setting = lambda key: listener_setting(config, listener, key)  # noqa: E731
    check_pem_stores(setting)
    warning = keystore_kafka_refuses(setting)
    if warning:
        log.warning("listener %s: %s", listener, warning)
    context = SSLContext(ssl.PROTOCOL_TLS_SERVER)
    _load_keystore(context, setting, listener)
    _load_truststore(context, setting)
    context.verify_mode = _CLIENT_AUTH[setting("ssl.client.auth")]
    _restrict(context, setting)
    return context


def check_pem_stores(setting: Callable[[str], Any]) -> None:
    """The stores' keys as Kafka checks them for PEM (``setting(key)``: the value, None or "" when unset);
    InvalidConfigError naming the key. A client has no keystore keys: they read as unset."""
    for store in ("keystore", "truststore"):
        kind = (setting(f"ssl.{store}.type") or PEM).strip()
        if kind.upper() != PEM:
            raise InvalidConfigError(f"ssl.{store}.type: {kind} {store}s are not read; convert it to PEM")
    if setting("ssl.keystore.password"):
        raise InvalidConfigError("ssl.keystore.password: a PEM keystore has none; its key takes ssl.key.password")
    if setting("ssl.truststore.password"):
        raise InvalidConfigError("ssl.truststore.password: a PEM truststore has none; leave it unset")
    for location, inline in (("keystore.location", "keystore.key"), ("truststore.location", "truststore.certificates")):
        if setting(f"ssl.{location}") and setting(f"ssl.{inline}"):
            raise InvalidConfigError(f"ssl.{inline}: given with ssl.{location}; give one of them")


def keystore_kafka_refuses(setting: Callable[[str], Any]) -> str | None:
    """What Kafka would refuse in a keystore zkafka reads (a PEM file without ``ssl.key.password``: Kafka 2.7+
    wants its key encrypted), as a warning; None when Kafka would take it too."""
    location = setting("ssl.keystore.location")
    if location and not setting("ssl.key.password"):
        return (
            f"ssl.keystore.location: {location} is read without ssl.key.password; Kafka refuses a PEM keystore"
            " file without one (its key encrypted)"
        )
    return None


def _load_keystore(context: SSLContext, setting: Any, listener: str) -> None:
    password = setting("ssl.key.password") or None
    location = setting("ssl.keystore.location")
    if location:
        try:
            context.load_cert_chain(location, password=password)
        except (OSError, ssl.SSLError) as exc:
            raise InvalidConfigError(f"ssl.keystore.location: cannot load {location}: {exc}") from None
        return
    chain, key = setting("ssl.keystore.certificate.chain"), setting("ssl.keystore.key")
    if not (chain and key):
        raise InvalidConfigError(f"ssl.keystore.location: required by the {listener} listener")
    with tempfile.TemporaryDirectory() as tmp:  # load_cert_chain reads files only
        chain_path, key_path = os.path.join(tmp, "chain.pem"), os.path.join(tmp, "key.pem")
        for path, text in ((chain_path, chain), (key_path, key)):
            with open(os.open(path, os.O_WRONLY | os.O_CREAT, 0o600), "w") as out:
                out.write(text.replace("\\n", "\n"))
        try:
            context.load_cert_chain(chain_path, key_path, password=password)
        except ssl.SSLError as exc:
            raise InvalidConfigError(
                f"ssl.keystore.key: cannot load the inline key and chain: {exc}"
            ) from None


def _load_truststore(context: SSLContext, setting: Any) -> None:
    location, inline = setting("ssl.truststore.location"), setting("ssl.truststore.certificates")
    try:
        if location:
            context.load_verify_locations(cafile=location)
        elif inline:
            context.load_verify_locations(cadata=inline.replace("\\n", "\n"))
    except (OSError, ssl.SSLError) as exc:
        raise InvalidConfigError(
            f"ssl.truststore.location: cannot load {location or 'the inline bundle'}: {exc}"
        ) from None


def _restrict(context: SSLContext, setting: Any) -> None:
    versions = []
    for name in setting("ssl.enabled.protocols"):
        if name not in _TLS_VERSIONS:
            raise InvalidConfigError(f"ssl.enabled.protocols: {name} is not one of {sorted(_TLS_VERSIONS)}")
        versions.append(_TLS_VERSIONS[name])
    if versions:
        context.minimum_version, context.maximum_version = min(versions), max(versions)
    suites = setting("ssl.cipher.suites")
    if suites:
        try:
            context.set_ciphers(":".join(suites))
        except ssl.SSLError:
            raise InvalidConfigError(f"ssl.cipher.suites: no cipher among {suites}") from None


def client_context(config: Any, listener: str) -> SSLContext:
    """The TLS context a broker connects to another broker's ``listener`` with: its keystore as the client
    certificate, its truststore to verify the other (host names checked unless the algorithm is blank)."""
    setting = lambda key: listener_setting(config, listener, key)  # noqa: E731
    context = SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    _load_truststore(context, setting)
    if setting("ssl.keystore.location") or setting("ssl.keystore.key"):
        _load_keystore(context, setting, listener)
    context.check_hostname = bool(setting("ssl.endpoint.identification.algorithm"))
    _restrict(context, setting)
    return context


def ssl_principal(sock: Any) -> str:
    """``User:<subject>`` of the client certificate in RFC 2253 form (Kafka's default principal builder), else
    ``User:ANONYMOUS``."""
    cert = sock.getpeercert()
    if not cert or not cert.get("subject"):
        return ANONYMOUS
    parts = []
    for rdn in reversed(cert["subject"]):
        parts.append("+".join(f"{_RDN_NAMES.get(name, name)}={_escape(value)}" for name, value in rdn))
    return "User:" + ",".join(parts)


def _escape(value: str) -> str:
    out = "".join("\\" + c if c in ',+"\\<>;=' else c for c in value)
    if out.startswith((" ", "#")):
        out = "\\" + out
    return out[:-1] + "\\ " if out.endswith(" ") else out
