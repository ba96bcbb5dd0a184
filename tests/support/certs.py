"""Test certificates made with the ``openssl`` CLI: a CA, a broker certificate for 127.0.0.1/localhost, and a
client certificate, each key and chain in one PEM file (the keystore form zkafka reads)."""

from __future__ import annotations

import subprocess
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Certs:
    ca: Path  # the truststore: the CA's certificate
    broker: Path  # broker keystore: certificate + key
    client_cert: Path
    client_key: Path


def _openssl(*args: str, cwd: Path) -> None:
    subprocess.run(["openssl", *args], cwd=cwd, check=True, capture_output=True)


def _signed(name: str, subject: str, cwd: Path, ext: str = "") -> None:
    _openssl(
        "req",
        "-newkey",
        "rsa:2048",
        "-nodes",
        "-keyout",
        f"{name}.key",
        "-subj",
        subject,
        "-out",
        f"{name}.csr",
        cwd=cwd,
    )
    extra = ["-extfile", "ext.cnf"] if ext else []
    if ext:
        (cwd / "ext.cnf").write_text(ext)
    _openssl(
        "x509",
        "-req",
        "-in",
        f"{name}.csr",
        "-CA",
        "ca.pem",
        "-CAkey",
        "ca.key",
        "-CAcreateserial",
        "-days",
        "2",
        "-out",
        f"{name}.pem",
        *extra,
        cwd=cwd,
    )


def make_certs(directory: Path) -> Certs:
    directory.mkdir(parents=True, exist_ok=True)
    _openssl(
        "req",
        "-x509",
        "-newkey",
        "rsa:2048",
        "-nodes",
        "-keyout",
        "ca.key",
        "-out",
        "ca.pem",
        "-days",
        "2",
        "-subj",
        "/CN=zkafka-test-ca",
        cwd=directory,
    )
    _signed("broker", "/CN=localhost/O=zkafka", directory, "subjectAltName=IP:127.0.0.1,DNS:localhost\n")
    _signed("client", "/C=NO/O=zkafka/CN=alice", directory)
    keystore = directory / "broker-keystore.pem"
    keystore.write_text((directory / "broker.pem").read_text() + (directory / "broker.key").read_text())
    return Certs(directory / "ca.pem", keystore, directory / "client.pem", directory / "client.key")


def encrypted_keystore(certs: Certs, password: str) -> Path:
    """The broker's keystore with its key as an encrypted PKCS#8 block (what Kafka's PEM keystore wants, with
    ``ssl.key.password``)."""
    directory = certs.broker.parent
    _openssl(
        "pkcs8", "-topk8", "-in", "broker.key", "-out", "broker-encrypted.key", "-passout", f"pass:{password}",
        cwd=directory,
    )  # fmt: skip
    keystore = directory / "broker-keystore-encrypted.pem"
    keystore.write_text((directory / "broker.pem").read_text() + (directory / "broker-encrypted.key").read_text())
    return keystore
