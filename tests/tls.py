"""Throwaway TLS material: a CA of the test's own and a server certificate for loopback
(`localhost` and 127.0.0.1), written where the servers that use it can read it."""

from __future__ import annotations

import datetime
import ipaddress
import os
import shutil
from dataclasses import dataclass
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID


@dataclass(frozen=True)
class TlsFiles:
    """PEM files: the CA certificate clients trust, the server's certificate and key."""

    ca: Path
    cert: Path
    key: Path

    def owned_by(self, user: str, folder: Path) -> TlsFiles:
        """A copy in `folder` owned by `user` (key mode 0600), for a server that runs as
        `user` and refuses a key others can read (PostgreSQL)."""
        folder.mkdir(parents=True, exist_ok=True)
        copies = TlsFiles(folder / "ca.pem", folder / "server.pem", folder / "server.key")
        for source, target in zip(
            (self.ca, self.cert, self.key), (copies.ca, copies.cert, copies.key), strict=True
        ):
            shutil.copyfile(source, target)
        copies.key.chmod(0o600)
        if os.geteuid() == 0:
            for path in (folder, copies.ca, copies.cert, copies.key):
                shutil.chown(path, user, user)
        return copies


def _name(common: str) -> x509.Name:
    return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common)])


def _pem_key(key: ec.EllipticCurvePrivateKey) -> bytes:
    return key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.TraditionalOpenSSL,
        serialization.NoEncryption(),
    )


def make_tls(folder: Path) -> TlsFiles:
    """A fresh CA and a loopback server certificate it signed, valid for one day."""
    folder.mkdir(parents=True, exist_ok=True)
    folder.chmod(0o755)
    now = datetime.datetime.now(datetime.UTC)
    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca = (
        x509.CertificateBuilder()
        .subject_name(_name("verdict test CA"))
        .issuer_name(_name("verdict test CA"))
        .public_key(ca_key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
        .add_extension(
            x509.KeyUsage(False, False, False, False, False, True, True, False, False),
            critical=True,
        )
        .sign(ca_key, hashes.SHA256())
    )
    key = ec.generate_private_key(ec.SECP256R1())
    loopback = [x509.DNSName("localhost"), x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]
    cert = (
        x509.CertificateBuilder()
        .subject_name(_name("localhost"))
        .issuer_name(ca.subject)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(x509.SubjectAlternativeName(loopback), critical=False)
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .add_extension(
            x509.ExtendedKeyUsage([x509.oid.ExtendedKeyUsageOID.SERVER_AUTH]), critical=False
        )
        .sign(ca_key, hashes.SHA256())
    )
    files = TlsFiles(folder / "ca.pem", folder / "server.pem", folder / "server.key")
    files.ca.write_bytes(ca.public_bytes(serialization.Encoding.PEM))
    files.cert.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    files.key.write_bytes(_pem_key(key))
    for path in (files.ca, files.cert, files.key):
        path.chmod(0o644)
    return files
