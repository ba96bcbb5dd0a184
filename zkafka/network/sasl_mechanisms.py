"""The SASL mechanisms (pure): PLAIN (RFC 4616, users from the listener's JAAS config) and SCRAM-SHA-256/512
(RFC 5802/7677, credentials as Kafka keeps them in ZooKeeper), server and client sides, and the JAAS syntax.

A mechanism server takes the client's tokens one at a time: ``evaluate(token) -> challenge``; ``complete``
once the client is authenticated, ``authorization_id`` its user name; SaslAuthenticationError when it is not.
A mechanism client (a broker dialling another) starts with ``initial()`` and answers each challenge with
``evaluate(challenge) -> token``; ``complete`` once the server has proved itself (SCRAM) or accepted (PLAIN).
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import re
import secrets
from collections.abc import Callable, Mapping
from typing import NamedTuple

from zkafka.errors import InvalidConfigError, SaslAuthenticationError

SCRAM_HASHES = {"SCRAM-SHA-256": "sha256", "SCRAM-SHA-512": "sha512"}
SCRAM_MIN_ITERATIONS = 4096
INVALID_CREDENTIALS = "Authentication failed: Invalid user credentials"


# -- JAAS ------------------------------------------------------------------------------------------------

_JAAS = re.compile(r"\s*(\S+)\s+(required|requisite|sufficient|optional)\s*(.*?)\s*;\s*", re.S)
_OPTION = re.compile(r'\s*([\w.-]+)\s*=\s*("(?:[^"\\]|\\.)*"|[^\s";]+)\s*')


def parse_jaas(key: str, text: str) -> tuple[str, dict[str, str]]:
    """``<LoginModule> required name="value" ...;`` (a ``sasl.jaas.config`` value): the module and its options."""
    match = _JAAS.fullmatch(text)
    if match is None:
        raise InvalidConfigError(f"{key}: not '<LoginModule> required name=\"value\" ...;'")
    options: dict[str, str] = {}
    rest, pos = match.group(3), 0
    while pos < len(rest):
        option = _OPTION.match(rest, pos)
        if option is None or option.end() == pos:
            raise InvalidConfigError(f"{key}: cannot read the options at {rest[pos : pos + 20]!r}")
        value = option.group(2)
        if value.startswith('"'):
            value = re.sub(r"\\(.)", r"\1", value[1:-1])
        options[option.group(1)] = value
        pos = option.end()
    return match.group(1), options


def plain_users(key: str, text: str) -> dict[str, str]:
    """The ``user_<name>="<password>"`` entries of a PlainLoginModule JAAS config."""
    _, options = parse_jaas(key, text)
    return {name[len("user_") :]: value for name, value in options.items() if name.startswith("user_")}


# -- PLAIN -----------------------------------------------------------------------------------------------


class PlainSaslServer:
    """RFC 4616: one token ``authzid NUL authcid NUL passwd`` checked against the configured users."""

    mechanism = "PLAIN"

    def __init__(self, users: Mapping[str, str]) -> None:
        self.users = users
        self.complete = False
        self.authorization_id = ""

    def evaluate(self, token: bytes) -> bytes:
        parts = token.split(b"\0")
        if len(parts) != 3:
            raise SaslAuthenticationError(f"Invalid SASL/PLAIN response: expected 3 tokens, got {len(parts)}")
        authzid, username, password = (part.decode("utf-8", "replace") for part in parts)
        if not username or not password:
            raise SaslAuthenticationError("Authentication failed: username or password not specified")
        expected = self.users.get(username)
        if expected is None or not hmac.compare_digest(expected.encode(), password.encode()):
            raise SaslAuthenticationError("Authentication failed: Invalid username or password")
        if authzid and authzid != username:
            raise SaslAuthenticationError(
                "Authentication failed: Client requested an authorization id that is different from username"
            )
        self.authorization_id, self.complete = username, True
        return b""


# -- SCRAM -----------------------------------------------------------------------------------------------


class ScramCredential(NamedTuple):
    """What the server keeps of a SCRAM password (``salt=…,stored_key=…,server_key=…,iterations=…``)."""

    salt: bytes
    stored_key: bytes
    server_key: bytes
    iterations: int

    def to_config(self) -> str:
        b64 = lambda data: base64.b64encode(data).decode("ascii")  # noqa: E731
        return (
            f"salt={b64(self.salt)},stored_key={b64(self.stored_key)},"
            f"server_key={b64(self.server_key)},iterations={self.iterations}"
        )

    @classmethod
    def from_config(cls, text: str) -> ScramCredential:
        fields = dict(item.split("=", 1) for item in text.split(",") if "=" in item)
        try:
            return cls(
                base64.b64decode(fields["salt"]),
                base64.b64decode(fields["stored_key"]),
                base64.b64decode(fields["server_key"]),
                int(fields["iterations"]),
            )
        except (KeyError, ValueError) as exc:
            raise ValueError(f"not a SCRAM credential: {exc}") from None


def scram_credential(
    mechanism: str, password: str, iterations: int = SCRAM_MIN_ITERATIONS
) -> ScramCredential:
    """A new credential for ``password`` (a random salt), as kafka-configs stores it."""
    name = SCRAM_HASHES[mechanism]
    salt = secrets.token_bytes(24)
    client_key, server_key = _scram_keys(name, password, salt, iterations)
    return ScramCredential(salt, hashlib.new(name, client_key).digest(), server_key, iterations)


def _scram_keys(name: str, password: str, salt: bytes, iterations: int) -> tuple[bytes, bytes]:
    """RFC 5802's ClientKey and ServerKey of a password."""
    salted = hashlib.pbkdf2_hmac(name, password.encode("utf-8"), salt, iterations)
    return hmac.new(salted, b"Client Key", name).digest(), hmac.new(salted, b"Server Key", name).digest()


class ScramSaslServer:
    """RFC 5802: client-first → server-first (nonce, salt, iterations); client-final (proof) → server-final."""

    def __init__(
        self,
        mechanism: str,
        credentials: Callable[[str], ScramCredential | None],
        server_nonce: Callable[[], str] = lambda: secrets.token_urlsafe(24),
    ) -> None:
        self.mechanism = mechanism
        self.server_nonce = server_nonce
        self.hash = SCRAM_HASHES[mechanism]
        self.credentials = credentials
        self.complete = False
        self.authorization_id = ""
        self._step = self._client_first

    def evaluate(self, token: bytes) -> bytes:
        try:
            text = token.decode("utf-8")
        except UnicodeDecodeError:
            raise SaslAuthenticationError("Invalid SCRAM message: not UTF-8") from None
        return self._step(text)

    def _client_first(self, text: str) -> bytes:
        match = re.fullmatch(r"([ny]|p=[^,]*),(a=[^,]*)?,(n=([^,]*),r=([^,]+)(?:,.*)?)", text)
        if match is None:
            raise SaslAuthenticationError("Invalid SCRAM client first message")
        self._gs2, self._client_first_bare = text[: match.start(3)], match.group(3)
        username = match.group(4).replace("=2C", ",").replace("=3D", "=")
        authzid = (match.group(2) or "a=")[2:]
        if authzid and authzid != username:
            raise SaslAuthenticationError("Authentication failed: authorization id is not the user name")
        self._credential = self.credentials(username)
        if self._credential is None:
            raise SaslAuthenticationError(INVALID_CREDENTIALS)
        self._username = username
        self._nonce = match.group(5) + self.server_nonce()
        salt = base64.b64encode(self._credential.salt).decode("ascii")
        self._server_first = f"r={self._nonce},s={salt},i={self._credential.iterations}"
        self._step = self._client_final
        return self._server_first.encode("utf-8")

    def _client_final(self, text: str) -> bytes:
        match = re.fullmatch(r"(c=([^,]*),r=([^,]*)(?:,.*?)?),p=([^,]+)", text)
        if match is None:
            raise SaslAuthenticationError("Invalid SCRAM client final message")
        if match.group(3) != self._nonce:
            raise SaslAuthenticationError("Invalid client nonce in the final client message")
        if match.group(2) != base64.b64encode(self._gs2.encode("utf-8")).decode("ascii"):
            raise SaslAuthenticationError("Invalid channel binding in the final client message")
        auth_message = f"{self._client_first_bare},{self._server_first},{match.group(1)}".encode()
        credential = self._credential
        signature = hmac.new(credential.stored_key, auth_message, self.hash).digest()
        try:
            proof = base64.b64decode(match.group(4), validate=True)
        except ValueError:
            raise SaslAuthenticationError(INVALID_CREDENTIALS) from None
        client_key = bytes(a ^ b for a, b in zip(proof, signature, strict=False))
        if len(proof) != len(signature) or not hmac.compare_digest(
            hashlib.new(self.hash, client_key).digest(), credential.stored_key
        ):
            raise SaslAuthenticationError(INVALID_CREDENTIALS)
        server_signature = hmac.new(credential.server_key, auth_message, self.hash).digest()
        self.authorization_id, self.complete = self._username, True
        self._step = self._done
        return b"v=" + base64.b64encode(server_signature)

    def _done(self, text: str) -> bytes:
        raise SaslAuthenticationError("SCRAM authentication already complete")


# -- the client side (a broker authenticating to another) ------------------------------------------------


class PlainSaslClient:
    """RFC 4616's one token; complete once the server accepted it."""

    mechanism = "PLAIN"

    def __init__(self, username: str, password: str) -> None:
        self.username, self.password = username, password
        self.complete = False

    def initial(self) -> bytes:
        return f"\0{self.username}\0{self.password}".encode()

    def evaluate(self, challenge: bytes) -> bytes:
        self.complete = True
        return b""


class ScramSaslClient:
    """RFC 5802: client-first, then the proof for the server-first, then the server's signature checked."""

    def __init__(
        self,
        mechanism: str,
        username: str,
        password: str,
        nonce: Callable[[], str] = lambda: secrets.token_urlsafe(24),
    ) -> None:
        self.mechanism, self.hash = mechanism, SCRAM_HASHES[mechanism]
        self.password = password
        name = username.replace("=", "=3D").replace(",", "=2C")
        self._first_bare = f"n={name},r={nonce()}"
        self.complete = False

    def initial(self) -> bytes:
        return f"n,,{self._first_bare}".encode()

    def evaluate(self, challenge: bytes) -> bytes:
        text = challenge.decode("utf-8", "replace")
        if self.complete or text.startswith("e="):
            raise SaslAuthenticationError(f"SCRAM server said {text!r}")
        if text.startswith("v="):
            if not hmac.compare_digest(text[2:].encode(), base64.b64encode(self._server_signature)):
                raise SaslAuthenticationError("Invalid server signature in the SCRAM server final message")
            self.complete = True
            return b""
        return self._proof(text)

    def _proof(self, server_first: str) -> bytes:
        match = re.fullmatch(r"r=([^,]+),s=([^,]+),i=(\d+)(?:,.*)?", server_first)
        client_nonce = self._first_bare.rsplit(",r=", 1)[1]
        if match is None or not match.group(1).startswith(client_nonce):
            raise SaslAuthenticationError("Invalid SCRAM server first message")
        iterations = int(match.group(3))
        if iterations < SCRAM_MIN_ITERATIONS:
            raise SaslAuthenticationError(f"SCRAM iterations {iterations} below {SCRAM_MIN_ITERATIONS}")
        salt = base64.b64decode(match.group(2))
        client_key, server_key = _scram_keys(self.hash, self.password, salt, iterations)
        without_proof = f"c={base64.b64encode(b'n,,').decode()},r={match.group(1)}"
        auth_message = f"{self._first_bare},{server_first},{without_proof}".encode()
        stored_key = hashlib.new(self.hash, client_key).digest()
        signature = hmac.new(stored_key, auth_message, self.hash).digest()
        proof = bytes(a ^ b for a, b in zip(client_key, signature, strict=True))
        self._server_signature = hmac.new(server_key, auth_message, self.hash).digest()
        return f"{without_proof},p={base64.b64encode(proof).decode()}".encode()
