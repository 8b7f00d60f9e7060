//! HTTPS termination. With `--tls-cert` and `--tls-key` the listener speaks TLS, offering
//! HTTP/2 and HTTP/1.1 through ALPN, with rustls and its aws-lc-rs provider, the one crypto
//! provider in the build (the shared store's client and the health check use it too,
//! [`install_provider`]):
//!
//! - **Key exchange**: the post-quantum hybrid X25519MLKEM768 first, then X25519, P-256 and
//!   P-384 for clients without it ([`provider`]). A recording of today's traffic decrypted
//!   with tomorrow's computers would be a breach of health data today. rustls takes the first
//!   group of the *client's* list that it supports, so the hybrid is chosen wherever the client
//!   prefers it (Chrome, Firefox, Go from 1.24, rustls); the hybrid exists in TLS 1.3 only.
//! - **Ciphers**: the provider's own, AES-256-GCM first, with its own TLS 1.3 key schedule.
//! - **Profile** ([`TlsProfile`], `--tls-profile`), named after Mozilla's: `intermediate`
//!   (default: TLS 1.3 and 1.2 with ECDHE and AEAD ciphers only, for older clients) or
//!   `modern` (TLS 1.3 only).
//! - **Resumption**: TLS 1.3 and TLS 1.2 session tickets, encrypted with keys that rustls'
//!   ticketer makes at random, rotates every 6 hours (a ticket is accepted for up to 12) and
//!   never writes anywhere, one ticket a handshake; TLS 1.2 session ids too, from a cache in
//!   memory. Another replica
//!   has other keys, so a client that lands there makes a full handshake.
//!
//! The certificate and key are checked at start-up (a missing, unreadable, empty or mismatched
//! pair, or a certificate expired or not yet valid, is one line naming the file and why, exit
//! code 2) and can be replaced without a restart: on SIGHUP, or when either file changes on
//! disk, the pair is loaded again, checked the same way and, if it is valid, used for every new
//! handshake; open connections keep theirs. A bad new pair is refused with a warning and the
//! old one stays in use; until good files replace it, the metrics say that the files on disk
//! are refused (a restart would fail), which pages. The store keeps what the metrics and
//! `/readyz` report: when the certificate in use expires (an expired one makes the replica
//! unready), when it was loaded, and when a reload was last refused.

pub mod metrics;

use std::fmt;
use std::fs;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, RwLock};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use rustls::crypto::CryptoProvider;
use rustls::crypto::aws_lc_rs::{self, kx_group};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use rustls::server::{ClientHello, ResolvesServerCert};
use rustls::sign::CertifiedKey;

/// Why a certificate and key cannot be used; the message names the file.
#[derive(Debug)]
pub enum TlsError {
    Unreadable {
        path: PathBuf,
        reason: String,
    },
    NoCertificate {
        path: PathBuf,
    },
    NoPrivateKey {
        path: PathBuf,
    },
    UnsupportedKey {
        path: PathBuf,
        reason: String,
    },
    Mismatch {
        cert: PathBuf,
        key: PathBuf,
    },
    /// The certificate's `notAfter` (a Unix time) is past: every client would refuse it.
    Expired {
        path: PathBuf,
        not_after: i64,
    },
    /// The certificate's `notBefore` (a Unix time) is still to come.
    NotYetValid {
        path: PathBuf,
        not_before: i64,
    },
    Config(String),
}

/// A Unix time as RFC 3339, for messages.
fn rfc3339(at: i64) -> String {
    jiff::Timestamp::from_second(at).map_or_else(|_| format!("Unix time {at}"), |at| at.to_string())
}

impl fmt::Display for TlsError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TlsError::Unreadable { path, reason } => {
                write!(f, "cannot read {}: {reason}", path.display())
            }
            TlsError::NoCertificate { path } => write!(
                f,
                "{} holds no PEM certificate (expected -----BEGIN CERTIFICATE-----)",
                path.display()
            ),
            TlsError::NoPrivateKey { path } => write!(
                f,
                "{} holds no PEM private key (expected a PKCS#8, PKCS#1 or SEC1 key)",
                path.display()
            ),
            TlsError::UnsupportedKey { path, reason } => {
                write!(
                    f,
                    "the private key in {} cannot be used: {reason}",
                    path.display()
                )
            }
            TlsError::Mismatch { cert, key } => write!(
                f,
                "the private key in {} does not belong to the certificate in {}",
                key.display(),
                cert.display()
            ),
            TlsError::Expired { path, not_after } => write!(
                f,
                "the certificate in {} expired at {} (its notAfter): clients would refuse it",
                path.display(),
                rfc3339(*not_after)
            ),
            TlsError::NotYetValid { path, not_before } => write!(
                f,
                "the certificate in {} is not valid before {} (its notBefore): clients would \
                 refuse it",
                path.display(),
                rfc3339(*not_before)
            ),
            TlsError::Config(reason) => write!(f, "TLS configuration: {reason}"),
        }
    }
}

impl std::error::Error for TlsError {}

/// The crypto provider of every TLS connection the service makes or takes: rustls' aws-lc-rs
/// provider with its cipher suites (TLS 1.3's three, and TLS 1.2's ECDHE with AES-GCM and
/// ChaCha20-Poly1305: Mozilla's intermediate list) and the key exchanges of the module
/// documentation, the post-quantum hybrid first.
pub fn provider() -> CryptoProvider {
    let mut provider = aws_lc_rs::default_provider();
    provider.kx_groups = vec![
        kx_group::X25519MLKEM768,
        kx_group::X25519,
        kx_group::SECP256R1,
        kx_group::SECP384R1,
    ];
    provider
}

/// Makes [`provider`] the process's default, which the clients that take no provider of their
/// own use (the shared store's Redis client). Called first thing at start; a second call
/// changes nothing.
pub fn install_provider() {
    // An error means a default is installed already: this one, by an earlier call.
    let _ = provider().install_default();
}

/// Which TLS versions the listener speaks, named after Mozilla's server-side TLS profiles.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum TlsProfile {
    /// TLS 1.3 and 1.2: every client of the last years, older ones included.
    #[default]
    Intermediate,
    /// TLS 1.3 only, for partners whose security review asks for it.
    Modern,
}

impl TlsProfile {
    fn versions(self) -> &'static [&'static rustls::SupportedProtocolVersion] {
        static INTERMEDIATE: [&rustls::SupportedProtocolVersion; 2] =
            [&rustls::version::TLS13, &rustls::version::TLS12];
        static MODERN: [&rustls::SupportedProtocolVersion; 1] = [&rustls::version::TLS13];
        match self {
            TlsProfile::Intermediate => &INTERMEDIATE,
            TlsProfile::Modern => &MODERN,
        }
    }
}

/// Reads and checks a certificate chain and its private key.
pub fn load_pair(cert_path: &Path, key_path: &Path) -> Result<CertifiedKey, TlsError> {
    let unreadable = |path: &Path, reason: String| TlsError::Unreadable {
        path: path.to_owned(),
        reason,
    };
    // Read first, so that a missing file is reported as such rather than as "no PEM".
    let cert_pem = fs::read(cert_path).map_err(|error| unreadable(cert_path, error.to_string()))?;
    let key_pem = fs::read(key_path).map_err(|error| unreadable(key_path, error.to_string()))?;

    let chain = CertificateDer::pem_slice_iter(&cert_pem)
        .collect::<Result<Vec<_>, _>>()
        .map_err(|error| unreadable(cert_path, format!("malformed PEM ({error})")))?;
    if chain.is_empty() {
        return Err(TlsError::NoCertificate {
            path: cert_path.to_owned(),
        });
    }
    let key = PrivateKeyDer::from_pem_slice(&key_pem).map_err(|error| match error {
        rustls::pki_types::pem::Error::NoItemsFound => TlsError::NoPrivateKey {
            path: key_path.to_owned(),
        },
        other => unreadable(key_path, format!("malformed PEM ({other})")),
    })?;
    let signing_key = provider()
        .key_provider
        .load_private_key(key)
        .map_err(|error| TlsError::UnsupportedKey {
            path: key_path.to_owned(),
            reason: error.to_string(),
        })?;
    let pair = CertifiedKey::new(chain, signing_key);
    match pair.keys_match() {
        Ok(()) | Err(rustls::Error::InconsistentKeys(rustls::InconsistentKeys::Unknown)) => {
            Ok(pair)
        }
        Err(rustls::Error::InconsistentKeys(rustls::InconsistentKeys::KeyMismatch)) => {
            Err(TlsError::Mismatch {
                cert: cert_path.to_owned(),
                key: key_path.to_owned(),
            })
        }
        Err(other) => Err(unreadable(
            cert_path,
            format!("not a usable certificate ({other})"),
        )),
    }
}

/// When each file was last changed, to notice a replacement.
type Stamps = [Option<(SystemTime, u64)>; 2];

fn stamp(path: &Path) -> Option<(SystemTime, u64)> {
    let metadata = fs::metadata(path).ok()?;
    Some((metadata.modified().ok()?, metadata.len()))
}

/// The certificate in use, replaceable while the server runs. Handshakes read it under a
/// read lock (once per connection, never per request).
pub struct CertificateStore {
    cert_path: PathBuf,
    key_path: PathBuf,
    current: RwLock<Arc<CertifiedKey>>,
    stamps: Mutex<Stamps>,
    status: Mutex<CertificateStatus>,
    /// Why the files on disk were last refused, while they are: a retry that fails the same
    /// way says nothing more.
    refusal: Mutex<Option<String>>,
}

/// What the metrics say about the certificate; times are Unix seconds.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CertificateStatus {
    /// The `notBefore` and `notAfter` of the certificate in use (`None` if they cannot be
    /// read from it).
    pub valid_from: Option<i64>,
    pub expires_at: Option<i64>,
    /// When the certificate in use was loaded.
    pub loaded_at: i64,
    /// When a reload was last refused.
    pub refused_at: Option<i64>,
    /// Reloads that replaced the certificate, and reloads refused, since start.
    pub reloaded: u64,
    pub refused: u64,
    /// Whether the files on disk were refused at the last reload: the certificate in use is
    /// older than they are, and a restart would refuse them too and exit.
    pub files_refused: bool,
}

impl CertificateStatus {
    /// The `notAfter` of the certificate in use, if it has passed at `now`.
    pub fn expired_at(&self, now: i64) -> Option<i64> {
        self.expires_at.filter(|not_after| now > *not_after)
    }
}

/// Checks that the leaf certificate is valid now, and returns its `notBefore` and `notAfter`
/// as Unix times;
/// `None`, said in a warning, when its validity cannot be read. rustls serves a certificate
/// without parsing it, while x509-cert reads strict DER (a serial number over 20 bytes, which
/// RFC 5280 forbids, or a BER quirk of some private CAs fails it): such a certificate is
/// served, but has no expiry metric, so neither the expiry alert nor the check here can see
/// it expire, and the operator must hear that.
fn checked_validity(
    pair: &CertifiedKey,
    cert_path: &Path,
    now: i64,
) -> Result<Option<(i64, i64)>, TlsError> {
    let read = pair
        .cert
        .first()
        .ok_or_else(|| "the file holds no certificate".to_owned())
        .and_then(|leaf| validity(leaf));
    match read {
        Ok((not_before, not_after)) => {
            if now > not_after {
                return Err(TlsError::Expired {
                    path: cert_path.to_owned(),
                    not_after,
                });
            }
            if now < not_before {
                return Err(TlsError::NotYetValid {
                    path: cert_path.to_owned(),
                    not_before,
                });
            }
            Ok(Some((not_before, not_after)))
        }
        Err(why) => {
            log::warn!(
                "the expiry of the certificate in {} cannot be read ({why}): it is served, \
                 but partner_api_tls_certificate_expiry_timestamp_seconds is absent and no \
                 expiry alert can fire for it",
                cert_path.display()
            );
            Ok(None)
        }
    }
}

/// A DER certificate's `notBefore` and `notAfter`, as Unix times.
fn validity(der: &[u8]) -> Result<(i64, i64), String> {
    use x509_cert::der::Decode;
    let certificate = x509_cert::Certificate::from_der(der).map_err(|error| error.to_string())?;
    let validity = certificate.tbs_certificate().validity();
    let unix = |time: x509_cert::time::Time| {
        i64::try_from(time.to_unix_duration().as_secs()).map_err(|error| error.to_string())
    };
    Ok((unix(validity.not_before)?, unix(validity.not_after)?))
}

fn unix_now() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |since| since.as_secs() as i64)
}

impl fmt::Debug for CertificateStore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CertificateStore")
            .field("cert_path", &self.cert_path)
            .field("key_path", &self.key_path)
            .finish_non_exhaustive()
    }
}

impl CertificateStore {
    /// Loads the pair, or says which file is wrong.
    pub fn load(cert_path: &Path, key_path: &Path) -> Result<Arc<CertificateStore>, TlsError> {
        let stamps = [stamp(cert_path), stamp(key_path)];
        let pair = load_pair(cert_path, key_path)?;
        let now = unix_now();
        let validity = checked_validity(&pair, cert_path, now)?;
        let status = CertificateStatus {
            valid_from: validity.map(|(not_before, _)| not_before),
            expires_at: validity.map(|(_, not_after)| not_after),
            loaded_at: now,
            ..CertificateStatus::default()
        };
        Ok(Arc::new(CertificateStore {
            cert_path: cert_path.to_owned(),
            key_path: key_path.to_owned(),
            current: RwLock::new(Arc::new(pair)),
            stamps: Mutex::new(stamps),
            status: Mutex::new(status),
            refusal: Mutex::new(None),
        }))
    }

    /// Expiry, load and reload times, for the metrics.
    pub fn status(&self) -> CertificateStatus {
        *self.status.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Loads the files again; a valid pair replaces the current one for new handshakes, an
    /// invalid one is refused and the current one stays.
    pub fn reload(&self) -> Result<(), TlsError> {
        self.load_again(false)
    }

    /// [`Self::reload`]; a `retry` of files refused before, refused again, is not counted as
    /// another refusal.
    fn load_again(&self, retry: bool) -> Result<(), TlsError> {
        *self.stamps.lock().unwrap_or_else(|e| e.into_inner()) =
            [stamp(&self.cert_path), stamp(&self.key_path)];
        let now = unix_now();
        let loaded = load_pair(&self.cert_path, &self.key_path).and_then(|pair| {
            let validity = checked_validity(&pair, &self.cert_path, now)?;
            Ok((pair, validity))
        });
        let mut status = self.status.lock().unwrap_or_else(|e| e.into_inner());
        match loaded {
            Ok((pair, validity)) => {
                status.valid_from = validity.map(|(not_before, _)| not_before);
                status.expires_at = validity.map(|(_, not_after)| not_after);
                status.loaded_at = now;
                status.reloaded += 1;
                status.files_refused = false;
                *self.current.write().unwrap_or_else(|e| e.into_inner()) = Arc::new(pair);
                Ok(())
            }
            Err(error) => {
                if !(retry && status.files_refused) {
                    status.refused_at = Some(now);
                    status.refused += 1;
                }
                status.files_refused = true;
                Err(error)
            }
        }
    }

    /// Reloads, logging the outcome; `why` says what triggered it.
    pub fn reload_and_log(&self, why: &str) {
        self.load_and_log(why, false);
    }

    /// Loads the files again and logs the outcome; a `retry` refused for the reason it was
    /// refused before logs nothing.
    fn load_and_log(&self, why: &str, retry: bool) {
        let outcome = self.load_again(retry);
        let mut refusal = self.refusal.lock().unwrap_or_else(|e| e.into_inner());
        match outcome {
            Ok(()) => {
                *refusal = None;
                log::info!(
                    "TLS certificate reloaded ({why}) from {}",
                    self.cert_path.display()
                );
            }
            Err(error) => {
                let reason = error.to_string();
                if retry && refusal.as_deref() == Some(reason.as_str()) {
                    return;
                }
                *refusal = Some(reason);
                log_refusal(why, &error);
            }
        }
    }
}

/// The warning of a refused reload: a warning, not an error, since the service goes on as it
/// was. What must not go unseen, files a restart would refuse, is a metric that pages
/// (`partner_api_tls_certificate_files_refused`).
fn log_refusal(why: &str, error: &TlsError) {
    log::warn!(
        "TLS certificate reload ({why}) refused, the previous certificate stays in use (a \
         restart would refuse the files too; they are tried again while they stay): {error}"
    );
}

impl CertificateStore {
    /// Whether either file changed since it was last loaded.
    pub fn files_changed(&self) -> bool {
        let now = [stamp(&self.cert_path), stamp(&self.key_path)];
        *self.stamps.lock().unwrap_or_else(|e| e.into_inner()) != now
    }

    /// The rustls configuration: `profile`'s versions, no client certificates, this store as
    /// the certificate source, session tickets (see the module documentation). actix-web adds
    /// the ALPN protocols (h2, http/1.1).
    pub fn server_config(
        self: &Arc<Self>,
        profile: TlsProfile,
    ) -> Result<rustls::ServerConfig, TlsError> {
        let config_error = |error: rustls::Error| TlsError::Config(error.to_string());
        let mut config = rustls::ServerConfig::builder_with_provider(Arc::new(provider()))
            .with_protocol_versions(profile.versions())
            .map_err(config_error)?
            .with_no_client_auth()
            .with_cert_resolver(Arc::clone(self) as Arc<dyn ResolvesServerCert>);
        config.ticketer = aws_lc_rs::Ticketer::new().map_err(config_error)?;
        // One TLS 1.3 ticket per handshake, not rustls' (and OpenSSL's) two: each costs a key
        // derivation and an encryption on every full handshake (BENCHMARKS.md, "HTTPS").
        // Clients spend a TLS 1.3 ticket once (RFC 8446, appendix C.4) and get a fresh one
        // with every resumption, so a client that reconnects one connection at a time always
        // resumes; one that opens several at once resumes one of them and makes full
        // handshakes for the rest (docs/operations/configuration.md, "Resumption").
        config.send_tls13_tickets = 1;
        Ok(config)
    }

    /// Checks the files every `every` for changes and reloads when they changed. (SIGHUP is
    /// the server's to listen for, in every mode: `server::startup`.)
    pub async fn watch(self: Arc<Self>, every: Duration) {
        let mut ticks = actix_web::rt::time::interval(every);
        loop {
            ticks.tick().await;
            if self.files_changed() {
                self.reload_and_log("the files changed");
            } else if self.status().files_refused {
                // Refused files are tried again: what refused them may pass (a certificate
                // not valid yet, issued a few seconds ahead of this clock; a read that failed
                // for want of descriptors).
                self.load_and_log("retried", true);
            }
        }
    }
}

impl ResolvesServerCert for CertificateStore {
    fn resolve(&self, _hello: ClientHello<'_>) -> Option<Arc<CertifiedKey>> {
        Some(Arc::clone(
            &self.current.read().unwrap_or_else(|e| e.into_inner()),
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(dir: &Path, name: &str, contents: &str) -> PathBuf {
        let path = dir.join(name);
        fs::write(&path, contents).unwrap();
        path
    }

    /// The validity is read from the leaf as written; a certificate x509-cert cannot read has
    /// none (and a warning), rather than a wrong one.
    #[test]
    fn the_validity_is_the_leafs() {
        let mut params = rcgen::CertificateParams::new(vec!["expiry.test".to_owned()]).unwrap();
        params.not_before = rcgen::date_time_ymd(2026, 1, 1);
        params.not_after = rcgen::date_time_ymd(2031, 5, 17);
        let key = rcgen::KeyPair::generate().unwrap();
        let certificate = params.self_signed(&key).unwrap();
        assert_eq!(
            validity(certificate.der()),
            Ok((1_767_225_600, 1_936_742_400))
        );
        // RFC 5280 allows serial numbers of 20 bytes at most; x509-cert refuses longer ones.
        params.serial_number = Some(rcgen::SerialNumber::from_slice(&[0x11; 24]));
        let long_serial = params.self_signed(&key).unwrap();
        assert!(validity(long_serial.der()).is_err());
        assert!(validity(b"not a certificate").is_err());
    }

    /// A pair is used from its notBefore to its notAfter, both included, and refused outside,
    /// with the time it stops or starts being valid; one whose validity cannot be read is used.
    #[test]
    fn a_certificate_outside_its_validity_is_refused() {
        let mut params = rcgen::CertificateParams::new(vec!["validity.test".to_owned()]).unwrap();
        params.not_before = rcgen::date_time_ymd(2026, 1, 1);
        params.not_after = rcgen::date_time_ymd(2031, 5, 17);
        let key = rcgen::KeyPair::generate().unwrap();
        let certificate = params.self_signed(&key).unwrap();
        let dir = std::env::temp_dir().join(format!("partner-api-validity-{}", std::process::id()));
        fs::create_dir_all(&dir).unwrap();
        let cert = write(&dir, "cert.pem", &certificate.pem());
        let key_path = write(&dir, "key.pem", &key.serialize_pem());
        let pair = load_pair(&cert, &key_path).unwrap();
        assert_eq!(
            checked_validity(&pair, &cert, 1_767_225_600).unwrap(),
            Some((1_767_225_600, 1_936_742_400))
        );
        assert_eq!(
            checked_validity(&pair, &cert, 1_936_742_400).unwrap(),
            Some((1_767_225_600, 1_936_742_400))
        );
        let expired = checked_validity(&pair, &cert, 1_936_742_401).unwrap_err();
        assert_eq!(
            expired.to_string(),
            format!(
                "the certificate in {} expired at 2031-05-17T00:00:00Z (its notAfter): clients \
                 would refuse it",
                cert.display()
            )
        );
        let early = checked_validity(&pair, &cert, 1_767_225_599).unwrap_err();
        assert_eq!(
            early.to_string(),
            format!(
                "the certificate in {} is not valid before 2026-01-01T00:00:00Z (its notBefore): \
                 clients would refuse it",
                cert.display()
            )
        );
        params.serial_number = Some(rcgen::SerialNumber::from_slice(&[0x11; 24]));
        let unreadable = params.self_signed(&key).unwrap();
        fs::write(&cert, unreadable.pem()).unwrap();
        let pair = load_pair(&cert, &key_path).unwrap();
        assert_eq!(checked_validity(&pair, &cert, i64::MAX).unwrap(), None);
        let _ = fs::remove_dir_all(&dir);
    }

    fn pair(name: &str) -> (String, String) {
        let certified = rcgen::generate_simple_self_signed(vec![name.to_owned()]).unwrap();
        (certified.cert.pem(), certified.signing_key.serialize_pem())
    }

    /// Completes what `client` and `server` have to say to each other, in memory.
    fn exchange(client: &mut rustls::ClientConnection, server: &mut rustls::ServerConnection) {
        let mut wire = Vec::new();
        for _ in 0..8 {
            wire.clear();
            client.write_tls(&mut wire).unwrap();
            let mut reading = &wire[..];
            while !reading.is_empty() {
                server.read_tls(&mut reading).unwrap();
                server.process_new_packets().unwrap();
            }
            wire.clear();
            server.write_tls(&mut wire).unwrap();
            let mut reading = &wire[..];
            while !reading.is_empty() {
                client.read_tls(&mut reading).unwrap();
                client.process_new_packets().unwrap();
            }
        }
    }

    /// With no session cache on the server, only a ticket can resume a TLS 1.2 session: the
    /// service's configuration issues them (rustls' default, `NeverProducesTickets`, does not).
    #[test]
    fn tls12_sessions_resume_by_ticket() {
        use rustls::client::{Resumption, Tls12Resumption};
        let dir = std::env::temp_dir().join(format!("partner-api-ticket-{}", std::process::id()));
        fs::create_dir_all(&dir).unwrap();
        let certified = rcgen::generate_simple_self_signed(vec!["localhost".to_owned()]).unwrap();
        let cert_path = write(&dir, "cert.pem", &certified.cert.pem());
        let key_path = write(&dir, "key.pem", &certified.signing_key.serialize_pem());
        let store = CertificateStore::load(&cert_path, &key_path).unwrap();
        let mut roots = rustls::RootCertStore::empty();
        roots.add(certified.cert.der().clone()).unwrap();
        let client = rustls::ClientConfig::builder_with_provider(Arc::new(provider()))
            .with_protocol_versions(&[&rustls::version::TLS12])
            .unwrap()
            .with_root_certificates(roots)
            .with_no_client_auth();
        let resumed = |server: rustls::ServerConfig| {
            let mut client = client.clone();
            client.resumption = Resumption::in_memory_sessions(4)
                .tls12_resumption(Tls12Resumption::SessionIdOrTickets);
            let (client, server) = (Arc::new(client), Arc::new(server));
            let mut kinds = Vec::new();
            for _ in 0..2 {
                let name = rustls::pki_types::ServerName::try_from("localhost").unwrap();
                let mut client_side =
                    rustls::ClientConnection::new(Arc::clone(&client), name).unwrap();
                let mut server_side = rustls::ServerConnection::new(Arc::clone(&server)).unwrap();
                exchange(&mut client_side, &mut server_side);
                kinds.push(client_side.handshake_kind());
            }
            kinds
        };
        let mut service = store.server_config(TlsProfile::Intermediate).unwrap();
        service.session_storage = Arc::new(rustls::server::NoServerSessionStorage {});
        // rustls' own default: no tickets.
        let default_ticketer = rustls::ServerConfig::builder_with_provider(Arc::new(provider()))
            .with_safe_default_protocol_versions()
            .unwrap()
            .with_no_client_auth()
            .with_cert_resolver(Arc::clone(&store) as Arc<dyn ResolvesServerCert>)
            .ticketer;
        let mut without_tickets = service.clone();
        without_tickets.ticketer = default_ticketer;
        use rustls::HandshakeKind::{Full, Resumed};
        assert_eq!(resumed(service), [Some(Full), Some(Resumed)]);
        assert_eq!(resumed(without_tickets), [Some(Full), Some(Full)]);
        fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn every_bad_pair_is_named_by_its_file() {
        let dir = std::env::temp_dir().join(format!("partner-api-tls-{}", std::process::id()));
        fs::create_dir_all(&dir).unwrap();
        let (cert, key) = pair("localhost");
        let (_, other_key) = pair("localhost");
        let cert_path = write(&dir, "cert.pem", &cert);
        let key_path = write(&dir, "key.pem", &key);
        let other_key_path = write(&dir, "other-key.pem", &other_key);
        let empty = write(&dir, "empty.pem", "");
        let missing = dir.join("missing.pem");

        load_pair(&cert_path, &key_path).unwrap();
        let message = |cert: &Path, key: &Path| load_pair(cert, key).unwrap_err().to_string();
        assert!(
            message(&missing, &key_path)
                .starts_with(&format!("cannot read {}: No such file", missing.display()))
        );
        assert_eq!(
            message(&empty, &key_path),
            format!(
                "{} holds no PEM certificate (expected -----BEGIN CERTIFICATE-----)",
                empty.display()
            )
        );
        assert_eq!(
            message(&cert_path, &empty),
            format!(
                "{} holds no PEM private key (expected a PKCS#8, PKCS#1 or SEC1 key)",
                empty.display()
            )
        );
        assert_eq!(
            message(&cert_path, &other_key_path),
            format!(
                "the private key in {} does not belong to the certificate in {}",
                other_key_path.display(),
                cert_path.display()
            )
        );
        // A key file given as the certificate and vice versa.
        assert!(message(&key_path, &cert_path).contains("holds no PEM certificate"));
        fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_bad_reload_keeps_the_current_pair() {
        let dir = std::env::temp_dir().join(format!("partner-api-reload-{}", std::process::id()));
        fs::create_dir_all(&dir).unwrap();
        let (cert, key) = pair("first.test");
        let cert_path = write(&dir, "cert.pem", &cert);
        let key_path = write(&dir, "key.pem", &key);
        let store = CertificateStore::load(&cert_path, &key_path).unwrap();
        let before = store.current.read().unwrap().cert[0].clone();

        let status = store.status();
        assert_eq!(
            (status.reloaded, status.refused, status.refused_at),
            (0, 0, None)
        );
        let expires = status
            .expires_at
            .expect("rcgen certificates have a notAfter");
        // rcgen's default validity ends on 4096-01-01T00:00:00Z.
        assert_eq!(expires, 67_090_118_400);

        write(&dir, "key.pem", "not a key");
        assert!(store.reload().is_err());
        assert_eq!(store.current.read().unwrap().cert[0], before);
        let status = store.status();
        assert_eq!((status.reloaded, status.refused), (0, 1));
        assert!(status.refused_at.unwrap() >= status.loaded_at);

        let (cert, key) = pair("second.test");
        write(&dir, "cert.pem", &cert);
        write(&dir, "key.pem", &key);
        store.reload().unwrap();
        assert_ne!(store.current.read().unwrap().cert[0], before);
        assert_eq!(store.status().reloaded, 1);
        fs::remove_dir_all(&dir).unwrap();
    }
}
