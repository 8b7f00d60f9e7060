//! The key file: every key issued, as the operator's `partner-api keys` commands write it and
//! every replica reads it. A JSON document of records (id, partner, scopes, the key's digest,
//! creation, expiry, revocation), never a key: the file gives nobody access. The operator mounts
//! the same file into every replica, which reads it at start, again when it changes (checked
//! every `--tls-watch-secs`, like the certificate) and on SIGHUP, so replicas agree without a
//! server of their own. A file that cannot be read or does not parse stops a start (exit 2);
//! on a reload it is refused with a warning and the keys read before stay in force.
//!
//! ```json
//! {"keys": [{"id": "ky_4Fh0s2LqPzX9aBc1", "partner": "pt_acme", "scopes": ["things:read"],
//!   "digest": "sha256:…", "created": "2026-11-27T19:30:00Z", "expires": "2027-11-27T00:00:00Z",
//!   "revoked": null}]}
//! ```
//!
//! A test key's record adds `"test": true`.

use std::collections::{HashMap, HashSet};
use std::fs;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, RwLock};
use std::time::SystemTime;

use jiff::Timestamp;
use serde::{Deserialize, Serialize};

use super::key::KeyDigest;

/// One record of the key file, as written.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct KeyRecord {
    /// The key's public id (`ky_` and 16 letters and digits): what logs, audit records and
    /// the operator's commands name it by.
    pub id: String,
    /// The partner the key was issued to (`pt_...`), as their agreement names them.
    pub partner: String,
    /// What the key may do (`things:read`): an operation names the one it needs.
    pub scopes: Vec<String>,
    /// `sha256:` and the key's digest in hex.
    pub digest: String,
    /// When it was issued (RFC 3339, UTC).
    pub created: String,
    /// The moment it stops working (the start of the expiry day, UTC), if any.
    pub expires: Option<String>,
    /// When it was revoked, if it was.
    pub revoked: Option<String>,
    /// A test key (`pak_test_...`, `keys issue --test`): it reaches only test data. Written
    /// only when true.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub test: bool,
}

/// The key file's document.
#[derive(Debug, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct KeyFile {
    pub keys: Vec<KeyRecord>,
}

/// A key in force, as a request is checked against it.
#[derive(Debug)]
pub struct PartnerKey {
    pub id: Arc<str>,
    pub partner: Arc<str>,
    pub scopes: Vec<String>,
    pub expires: Option<Timestamp>,
    pub revoked: Option<Timestamp>,
    /// A test key: the request reaches only test data, and its audit record says so.
    pub test: bool,
    /// The number the rate limiter files this key's requests under: the first 8 bytes of the
    /// SHA-256 of its id, the same in every replica.
    pub limit_key: u64,
}

impl PartnerKey {
    pub fn has_scope(&self, scope: &str) -> bool {
        self.scopes.iter().any(|held| held == scope)
    }
}

impl KeyFile {
    /// Reads the file at `path`; the error names the file and what is wrong, never a digest.
    pub fn read(path: &Path) -> Result<KeyFile, String> {
        let text = read_regular(path)
            .map_err(|error| format!("cannot read the key file {}: {error}", path.display()))?;
        KeyFile::parse(&text, path)
    }

    /// The key file `text`, read from `path` (which the errors name).
    pub fn parse(text: &str, path: &Path) -> Result<KeyFile, String> {
        let file: KeyFile = serde_json::from_str(text).map_err(|error| {
            format!(
                "the key file {} is not a key file: {} (line {}, column {})",
                path.display(),
                error.classify_word(),
                error.line(),
                error.column()
            )
        })?;
        file.table()
            .map_err(|error| format!("the key file {}: {error}", path.display()))?;
        Ok(file)
    }

    /// The keys by digest, every record checked: ids and digests unique, fields well shaped.
    pub fn table(&self) -> Result<HashMap<KeyDigest, Arc<PartnerKey>>, String> {
        let mut table = HashMap::with_capacity(self.keys.len());
        let mut ids = HashSet::with_capacity(self.keys.len());
        for (index, record) in self.keys.iter().enumerate() {
            let key = record
                .parse()
                .map_err(|error| format!("record {} ({}): {error}", index + 1, record.id))?;
            if !ids.insert(record.id.clone()) {
                return Err(format!("the id {} is used twice", record.id));
            }
            let digest = KeyDigest::parse(&record.digest).expect("checked by parse");
            if table.insert(digest, Arc::new(key)).is_some() {
                return Err(format!("record {} repeats a digest", index + 1));
            }
        }
        Ok(table)
    }
}

/// The text of the regular file at `path`, opened without waiting: a FIFO put in its place
/// would block the reading thread until a writer came.
fn read_regular(path: &Path) -> io::Result<String> {
    use std::io::Read;
    use std::os::unix::fs::OpenOptionsExt;
    let mut file = fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(path)?;
    if !file.metadata()?.is_file() {
        return Err(io::Error::other("not a regular file"));
    }
    let mut text = String::new();
    file.read_to_string(&mut text)?;
    Ok(text)
}

trait ClassifyWord {
    fn classify_word(&self) -> &'static str;
}

impl ClassifyWord for serde_json::Error {
    fn classify_word(&self) -> &'static str {
        match self.classify() {
            serde_json::error::Category::Io => "it could not be read",
            serde_json::error::Category::Syntax | serde_json::error::Category::Eof => {
                "it is not valid JSON"
            }
            serde_json::error::Category::Data => "a field is missing, unknown or of a wrong type",
        }
    }
}

impl KeyRecord {
    fn parse(&self) -> Result<PartnerKey, String> {
        if !is_id(&self.id, "ky") {
            return Err("the id must be ky_ and letters and digits".to_owned());
        }
        if !is_id(&self.partner, "pt") {
            return Err("the partner must be pt_ and letters and digits".to_owned());
        }
        if let Some(scope) = self.scopes.iter().find(|scope| !is_scope(scope)) {
            return Err(format!(
                "the scope {scope:?} is not <things>:<read|write|...>"
            ));
        }
        KeyDigest::parse(&self.digest)
            .ok_or_else(|| "the digest must be sha256: and 64 hex digits".to_owned())?;
        let time = |name: &str, value: &str| {
            value
                .parse::<Timestamp>()
                .map_err(|_| format!("{name} must be an RFC 3339 time"))
        };
        time("created", &self.created)?;
        let expires = self
            .expires
            .as_deref()
            .map(|value| time("expires", value))
            .transpose()?;
        let revoked = self
            .revoked
            .as_deref()
            .map(|value| time("revoked", value))
            .transpose()?;
        let digest = aws_lc_rs::digest::digest(&aws_lc_rs::digest::SHA256, self.id.as_bytes());
        let mut first = [0u8; 8];
        first.copy_from_slice(&digest.as_ref()[..8]);
        Ok(PartnerKey {
            id: Arc::from(self.id.as_str()),
            partner: Arc::from(self.partner.as_str()),
            scopes: self.scopes.clone(),
            expires,
            revoked,
            test: self.test,
            limit_key: u64::from_be_bytes(first),
        })
    }
}

/// `prefix`, `_`, and 1 to 64 letters and digits: the contract's id shape.
pub fn is_id(value: &str, prefix: &str) -> bool {
    value
        .strip_prefix(prefix)
        .and_then(|rest| rest.strip_prefix('_'))
        .is_some_and(|body| {
            (1..=64).contains(&body.len()) && body.bytes().all(|byte| byte.is_ascii_alphanumeric())
        })
}

/// `<things>:<verb>`, lower case letters and `_`: `things:read`, `enrolments:write`.
pub fn is_scope(value: &str) -> bool {
    let word = |part: &str| {
        !part.is_empty()
            && part
                .bytes()
                .all(|byte| byte.is_ascii_lowercase() || byte == b'_')
    };
    value
        .split_once(':')
        .is_some_and(|(things, verb)| word(things) && word(verb))
}

/// The keys in force in this process, read from the key file (or none, without one); shared
/// by every worker. See the module documentation.
#[derive(Clone, Debug, Default)]
pub struct KeyStore(Arc<Inner>);

#[derive(Debug, Default)]
struct Inner {
    path: Option<PathBuf>,
    table: RwLock<Arc<HashMap<KeyDigest, Arc<PartnerKey>>>>,
    /// What the file looked like when last read: reread when it changes.
    stamp: Mutex<Option<FileStamp>>,
    /// Whether the last attempt to read the file was refused (the keys before it stay).
    refused: AtomicBool,
    /// Keys in force after the last successful read.
    loaded: AtomicU64,
}

/// Enough of a file's metadata to notice that it was replaced or written.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct FileStamp {
    modified: Option<SystemTime>,
    length: u64,
    inode: u64,
}

fn stamp_of(path: &Path) -> io::Result<FileStamp> {
    use std::os::unix::fs::MetadataExt;
    let metadata = fs::metadata(path)?;
    Ok(FileStamp {
        modified: metadata.modified().ok(),
        length: metadata.len(),
        inode: metadata.ino(),
    })
}

impl KeyStore {
    /// The keys of the file at `path`: read now, and an error (which stops the start) when it
    /// cannot be used.
    pub fn from_file(path: &Path) -> Result<KeyStore, String> {
        let stamp = stamp_of(path).ok();
        let table = KeyFile::read(path)?.table()?;
        let loaded = table.len() as u64;
        Ok(KeyStore(Arc::new(Inner {
            path: Some(path.to_owned()),
            table: RwLock::new(Arc::new(table)),
            stamp: Mutex::new(stamp),
            refused: AtomicBool::new(false),
            loaded: AtomicU64::new(loaded),
        })))
    }

    /// The keys of `file`, held in memory (tests).
    pub fn from_records(file: &KeyFile) -> Result<KeyStore, String> {
        let table = file.table()?;
        let store = KeyStore::default();
        store.0.loaded.store(table.len() as u64, Ordering::Relaxed);
        *store
            .0
            .table
            .write()
            .unwrap_or_else(|poison| poison.into_inner()) = Arc::new(table);
        Ok(store)
    }

    /// The key with `digest`, if one was issued.
    pub fn find(&self, digest: &KeyDigest) -> Option<Arc<PartnerKey>> {
        let table = self
            .0
            .table
            .read()
            .unwrap_or_else(|poison| poison.into_inner());
        table.get(digest).cloned()
    }

    /// Whether keys come from a file (and so may be reloaded).
    pub fn has_file(&self) -> bool {
        self.0.path.is_some()
    }

    /// Keys in force.
    pub fn loaded(&self) -> u64 {
        self.0.loaded.load(Ordering::Relaxed)
    }

    /// Whether the last read of the file was refused.
    pub fn refused(&self) -> bool {
        self.0.refused.load(Ordering::Relaxed)
    }

    /// Reads the file again when it changed since it was last read (the watch's tick).
    pub fn reload_if_changed(&self) {
        let Some(path) = &self.0.path else {
            return;
        };
        let now = stamp_of(path).ok();
        let changed = *self
            .0
            .stamp
            .lock()
            .unwrap_or_else(|poison| poison.into_inner())
            != now;
        // A refused file is tried again on every tick, as a refused certificate is: the
        // operator's fix may keep the same size and second.
        if changed || self.refused() {
            self.reload(if changed {
                "the key file changed"
            } else {
                "retrying"
            });
        }
    }

    /// Reads the file again now (SIGHUP); a file that cannot be used is refused with a warning
    /// and the keys in force stay.
    pub fn reload(&self, why: &str) {
        let Some(path) = &self.0.path else {
            return;
        };
        let stamp = stamp_of(path).ok();
        let was_refused = self.refused();
        match KeyFile::read(path).and_then(|file| file.table()) {
            Ok(table) => {
                let count = table.len();
                *self
                    .0
                    .table
                    .write()
                    .unwrap_or_else(|poison| poison.into_inner()) = Arc::new(table);
                self.0.loaded.store(count as u64, Ordering::Relaxed);
                self.0.refused.store(false, Ordering::Relaxed);
                log::info!("keys reloaded ({why}): {count} in the file");
            }
            Err(error) => {
                self.0.refused.store(true, Ordering::Relaxed);
                if !was_refused || why == "SIGHUP" {
                    log::warn!("{error}; the keys read before stay in force ({why})");
                }
            }
        }
        *self
            .0
            .stamp
            .lock()
            .unwrap_or_else(|poison| poison.into_inner()) = stamp;
    }
}

/// The key file's series: keys in force, and whether its last read was refused.
#[derive(Debug)]
pub struct KeysCollector(pub KeyStore);

impl prometheus_client::collector::Collector for KeysCollector {
    fn encode(
        &self,
        mut encoder: prometheus_client::encoding::DescriptorEncoder,
    ) -> std::fmt::Result {
        use prometheus_client::metrics::MetricType;
        encoder
            .encode_descriptor(
                "partner_api_keys_loaded",
                "Partner keys in the key file as last read (revoked and expired ones included).",
                None,
                MetricType::Gauge,
            )?
            .encode_gauge(&(self.0.loaded() as i64))?;
        encoder
            .encode_descriptor(
                "partner_api_keys_file_refused",
                "1 while the key file, changed or signalled, cannot be used: the keys read \
                 before stay in force, and a key issued or revoked since is not.",
                None,
                MetricType::Gauge,
            )?
            .encode_gauge(&i64::from(self.0.refused()))?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(id: &str, digest: &str) -> KeyRecord {
        KeyRecord {
            id: id.to_owned(),
            partner: "pt_acme".to_owned(),
            scopes: vec!["things:read".to_owned()],
            digest: digest.to_owned(),
            created: "2026-11-27T19:30:00Z".to_owned(),
            expires: None,
            revoked: None,
            test: false,
        }
    }

    fn digest(n: u8) -> String {
        format!("sha256:{}", format!("{n:02x}").repeat(32))
    }

    #[test]
    fn a_file_with_repeated_or_misshapen_records_is_refused() {
        let good = KeyFile {
            keys: vec![record("ky_1", &digest(1)), record("ky_2", &digest(2))],
        };
        assert_eq!(good.table().unwrap().len(), 2);
        let twice = KeyFile {
            keys: vec![record("ky_1", &digest(1)), record("ky_1", &digest(2))],
        };
        assert_eq!(twice.table().unwrap_err(), "the id ky_1 is used twice");
        let same_digest = KeyFile {
            keys: vec![record("ky_1", &digest(1)), record("ky_2", &digest(1))],
        };
        assert_eq!(
            same_digest.table().unwrap_err(),
            "record 2 repeats a digest"
        );
        for (field, bad) in [
            ("id", record("key_1", &digest(1))),
            ("digest", record("ky_1", "sha256:12")),
            (
                "partner",
                KeyRecord {
                    partner: "acme".into(),
                    ..record("ky_1", &digest(1))
                },
            ),
            (
                "scope",
                KeyRecord {
                    scopes: vec!["Things".into()],
                    ..record("ky_1", &digest(1))
                },
            ),
            (
                "expires",
                KeyRecord {
                    expires: Some("soon".into()),
                    ..record("ky_1", &digest(1))
                },
            ),
        ] {
            let error = KeyFile { keys: vec![bad] }.table().unwrap_err();
            assert!(error.contains(field), "{field}: {error}");
        }
    }

    #[test]
    fn scopes_and_ids_have_their_shapes() {
        assert!(is_scope("things:read") && is_scope("enrolment_plans:write"));
        for bad in [
            "things",
            ":read",
            "things:",
            "Things:read",
            "things:read:all",
            "th ngs:read",
        ] {
            assert!(!is_scope(bad), "{bad}");
        }
        assert!(is_id("pt_acme1", "pt") && !is_id("pt_", "pt") && !is_id("ky_1", "pt"));
    }
}
